"""A booking journey through a client that openapi-python-client generated from /openapi.json:
what a Python developer outside the project would write. `npm run clients:check` generates the
package `marketplace_api_client` beside this file and runs this against a running system.

  MARKETPLACE_URL             the gateway
  ADMIN_EMAIL, ADMIN_PASSWORD the seeded admin, who approves the consultation
"""

import datetime
import os
import random
import string
import sys
import time
from urllib.parse import parse_qs, urlparse

from marketplace_api_client import AuthenticatedClient, Client
from marketplace_api_client.api.catalog import list_products
from marketplace_api_client.api.consultation import (
    approve_consultation,
    create_booking,
    create_consultation,
    create_pricing,
    create_rule_set,
    list_bookings,
    list_slots,
)
from marketplace_api_client.api.gateway import login, register
from marketplace_api_client.api.wallet import create_topup, get_wallet, pay_checkout
from marketplace_api_client.models import (
    ApproveConsultationBody,
    AvailabilityIntervalInput,
    AvailabilityRuleInput,
    CheckoutForm,
    CreateBookingBody,
    CreateConsultationBody,
    CreatePricingBody,
    CreateRuleSetBody,
    CreateTopUpBody,
    DeliveryMode,
    ErrorBody,
    LoginBody,
    ParticipantInput,
    PaymentMethod,
    RegisterBody,
    RegisterRole,
    SessionType,
    Weekday,
)

BASE = os.environ["MARKETPLACE_URL"]
ADMIN = LoginBody(email=os.environ.get("ADMIN_EMAIL", ""), password=os.environ.get("ADMIN_PASSWORD", ""))


def say(line: str) -> None:
    print(f"[openapi-python-client] {line}", flush=True)


def ok(response, what: str):
    """The parsed body of a 200, else a failure naming the call and its answer."""
    if response.status_code != 200 or isinstance(response.parsed, ErrorBody) or response.parsed is None:
        raise SystemExit(f"{what}: {response.status_code} {response.content[:400]!r}")
    return response.parsed


def eventually(what: str, read, check):
    deadline = time.time() + 30
    while True:
        answer = read()
        if answer.status_code == 200 and check(answer.parsed):
            return answer.parsed
        if time.time() > deadline:
            raise SystemExit(f"{what}: not within 30 s (last {answer.status_code})")
        time.sleep(0.3)


def main() -> None:
    anonymous = Client(base_url=BASE)
    admin = ok(login.sync_detailed(client=anonymous, body=ADMIN), "admin login").data
    say(f"the admin logs in: {admin.user.role}")

    unique = "".join(random.choices(string.ascii_lowercase + string.digits, k=10))

    def sign_up(role: RegisterRole, full_name: str):
        body = RegisterBody(email=f"{role.value}-py-{unique}@example.com", password="a long password", full_name=full_name, role=role)
        return ok(register.sync_detailed(client=anonymous, body=body), f"register {role.value}").data

    seller = sign_up(RegisterRole.SELLER, "Abebe Kebede")
    buyer = sign_up(RegisterRole.BUYER, "Sara Tesfaye")
    say(f"a seller and a buyer register: {seller.user.reference_id}, {buyer.user.reference_id}")
    as_seller = AuthenticatedClient(base_url=BASE, token=seller.access_token)
    as_buyer = AuthenticatedClient(base_url=BASE, token=buyer.access_token)
    as_admin = AuthenticatedClient(base_url=BASE, token=admin.access_token)

    rules = [
        AvailabilityRuleInput(
            type_="weekly",
            weekday=day,
            intervals=[AvailabilityIntervalInput(start_time="09:00:00", end_time="12:00:00", enabled=True)],
        )
        for day in Weekday
    ]
    rule_set = ok(
        create_rule_set.sync_detailed(
            client=as_seller, body=CreateRuleSetBody(name="Mornings", timezone="Africa/Addis_Ababa", availability_rules=rules)
        ),
        "rule set",
    ).data
    pricing = ok(create_pricing.sync_detailed(client=as_seller, body=CreatePricingBody(base_price=750, currency="ETB")), "pricing").data
    consultation = ok(
        create_consultation.sync_detailed(
            client=as_seller,
            body=CreateConsultationBody(
                title="Business plan review",
                duration=60,
                session_type=SessionType.ONETOONE,
                delivery_mode=DeliveryMode.ONLINE,
                timezone="Africa/Addis_Ababa",
                language="Amharic",
                category="Business",
                # The keys a request takes are strings (an id or a reference); the ids answered are typed (UUID).
                rule_set_id=str(rule_set.id),
                pricing_id=pricing.id,
            ),
        ),
        "consultation",
    ).data
    say(f"the seller offers a consultation: {consultation.reference_id} ({consultation.current_status}), rule set {rule_set.reference_id}")

    # The admin approves the version they read (here: the one the seller created).
    approved = ok(
        approve_consultation.sync_detailed(
            consultation.id, client=as_admin, body=ApproveConsultationBody(version=consultation.version)
        ),
        "approve",
    ).data
    say(f"the admin approves it: {approved.visibility}")

    # The wallet is opened from the gateway's user.registered: an event away.
    eventually("the buyer's wallet", lambda: get_wallet.sync_detailed(client=as_buyer), lambda _: True)
    top_up = ok(
        create_topup.sync_detailed(
            buyer.user.reference_id,
            client=as_buyer,
            body=CreateTopUpBody(amount=1000, payment_method=PaymentMethod.CHAPA, redirect_url=f"{BASE}/done"),
        ),
        "top-up",
    ).data
    token = parse_qs(urlparse(top_up.payment_url).query)["token"][0]
    # The sandbox checkout answers 303 to the client's address (httpx does not follow it).
    paid = pay_checkout.sync_detailed(top_up.reference_id, client=anonymous, body=CheckoutForm(token=token))
    if paid.status_code != 303 or "status=Completed" not in paid.headers.get("location", ""):
        raise SystemExit(f"sandbox checkout: {paid.status_code} {paid.headers.get('location')}")
    wallet = eventually(
        "the top-up credited", lambda: get_wallet.sync_detailed(client=as_buyer), lambda body: body.data.etb_available_balance == 1000
    )
    say(f"the buyer tops up on the sandbox checkout: {top_up.reference_id}, balance {wallet.data.etb_available_balance} ETB")

    today = datetime.date.today()
    slots = ok(
        list_slots.sync_detailed(
            consultation.id, client=as_buyer, from_=today + datetime.timedelta(days=1), to=today + datetime.timedelta(days=7)
        ),
        "slots",
    ).data.slots
    if not slots:
        raise SystemExit("no free slot in the coming week")
    slot = slots[0]

    def booking_body() -> CreateBookingBody:
        return CreateBookingBody(
            seller_id=str(seller.user.id),
            consultation_id=consultation.id,
            rule_set_id=str(rule_set.id),
            date=slot.date,
            start_time=slot.start_time,
            end_time=slot.end_time,
            participants=[ParticipantInput(full_name=buyer.user.full_name, email=buyer.user.email, phone="+251911223344")],
            sub_total=750,
            total_amount=750,
            currency="ETB",
        )

    booking = ok(create_booking.sync_detailed(client=as_buyer, body=booking_body()), "booking").data
    say(f"the buyer books {slot.date} {slot.start_time}: {booking.reference_id} {booking.status}, {booking.total_amount} {booking.currency}")

    listed = ok(list_bookings.sync_detailed(client=as_buyer), "bookings").data
    if not any(item.id == booking.booking_id for item in listed.bookings):
        raise SystemExit("the booking is not in the buyer's list")
    say(f"the buyer's bookings list it: {len(listed.bookings)} booking(s), status {listed.bookings[0].status}")

    # An error case: the same slot again (the consultation is one-to-one): a 422 in the error envelope.
    again = create_booking.sync_detailed(client=as_buyer, body=booking_body())
    if again.status_code != 422 or not isinstance(again.parsed, ErrorBody) or again.parsed.success is not False:
        raise SystemExit(f"booking the slot again answered {again.status_code}")
    code = again.parsed.errors[0].code if again.parsed.errors else ""
    say(f'booking the same slot again is refused: {again.status_code} {code} "{again.parsed.message}"')

    products = ok(list_products.sync_detailed(client=anonymous), "products")
    say(f"the public product listing answers: page {products.pagination.page}, {products.pagination.total} product(s)")
    say("journey done")


if __name__ == "__main__":
    try:
        main()
    except SystemExit as failure:
        print(f"[openapi-python-client] journey FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
