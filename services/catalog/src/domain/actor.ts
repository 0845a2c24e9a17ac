import type { Role } from '@mkt/contracts/catalog';

/** Who asks (the verified token's user, as http/ hands it over): all a rule needs to know of them. */
export interface Actor {
  id: string;
  ref: string;
  role: Role;
}
