import type { Bank } from '@mkt/contracts/wallet';

type Seed = [name: string, code: string, swift: string, accountLength: number, mobileMoney: boolean, rtgs: boolean, allDay: boolean];

// Ethiopian banks and mobile-money providers with their SWIFT codes; account lengths as the
// banks issue them (mobile money: the 10-digit phone number, 09xxxxxxxx or 07xxxxxxxx).
const SEEDS: Seed[] = [
  ['Commercial Bank of Ethiopia', 'CBE', 'CBETETAA', 13, false, true, true],
  ['Awash Bank', 'AWASH', 'AWINETAA', 14, false, true, true],
  ['Dashen Bank', 'DASHEN', 'DASHETAA', 13, false, true, true],
  ['Bank of Abyssinia', 'BOA', 'ABYSETAA', 8, false, true, true],
  ['Wegagen Bank', 'WEGAGEN', 'WEGAETAA', 13, false, true, false],
  ['Hibret Bank', 'HIBRET', 'UNTDETAA', 16, false, true, false],
  ['Nib International Bank', 'NIB', 'NIBIETAA', 13, false, true, false],
  ['Cooperative Bank of Oromia', 'COOP', 'CBORETAA', 13, false, true, true],
  ['Lion International Bank', 'LION', 'LIBSETAA', 13, false, true, false],
  ['Oromia Bank', 'OROMIA', 'ORIRETAA', 13, false, true, false],
  ['Zemen Bank', 'ZEMEN', 'ZEMEETAA', 16, false, true, true],
  ['Bunna Bank', 'BUNNA', 'BUNAETAA', 13, false, true, false],
  ['Berhan Bank', 'BERHAN', 'BERHETAA', 13, false, true, false],
  ['Abay Bank', 'ABAY', 'ABAYETAA', 16, false, true, false],
  ['Addis International Bank', 'ADDIS', 'ABSCETAA', 13, false, true, false],
  ['Enat Bank', 'ENAT', 'ENATETAA', 13, false, true, false],
  ['Global Bank Ethiopia', 'GLOBAL', 'DEGAETAA', 13, false, true, false],
  ['Amhara Bank', 'AMHARA', 'AMHRETAA', 13, false, true, false],
  ['Development Bank of Ethiopia', 'DBE', 'DEETETAA', 13, false, true, false],
  ['Ahadu Bank', 'AHADU', 'AHUUETAA', 10, false, false, false],
  ['Tsehay Bank', 'TSEHAY', 'TSCPETAA', 13, false, false, false],
  ['Hijra Bank', 'HIJRA', 'HIJRETAA', 16, false, false, false],
  ['ZamZam Bank', 'ZAMZAM', 'ZEMZETAA', 13, false, false, false],
  ['Siinqee Bank', 'SIINQEE', 'SINQETAA', 13, false, true, false],
  ['Gadaa Bank', 'GADAA', 'GDAAETAA', 13, false, false, false],
  ['telebirr', 'TELEBIRR', 'ETHTETAA', 10, true, false, true],
  ['M-Pesa Ethiopia', 'MPESA', 'SAFAETAA', 10, true, false, true],
  ['CBE Birr', 'CBEBIRR', 'CBETETAA', 10, true, false, true],
];

export const BANKS: readonly Bank[] = Object.freeze(
  SEEDS.map(([name, code, swift, accountLength, mobileMoney, rtgs, allDay], index) => ({
    id: String(index + 1),
    name,
    code,
    bank_code: code,
    country: 'ET',
    swift_code: swift,
    account_length: accountLength,
    is_mobile_money: mobileMoney,
    is_active: true,
    is_rtgs: rtgs,
    is_24hrs: allDay,
    currency: 'ETB',
  })),
);

export function activeBank(code: string): Bank | null {
  const wanted = code.trim().toUpperCase();
  return BANKS.find((bank) => bank.is_active && (bank.code === wanted || bank.bank_code === wanted)) ?? null;
}

/** The account number is all digits, of the bank's length. */
export function accountNumberFits(bank: Bank, accountNumber: string): boolean {
  return new RegExp(`^\\d{${bank.account_length}}$`).test(accountNumber);
}
