# ranks: 3..3
# tests/verify/a2a_relay.dsl done right: the block for the rank after next is parked in a scratch unit of the
# relay, then sent on into its place.
algorithm relay implements all_to_all {
  units p * p scratch 1
  step {
    send unit r * p + (r + 1) % p to (r + 1) % p
    send unit r * p + (r + 2) % p to (r + 1) % p at unit p * p
  }
  step { send unit p * p to (r + 1) % p at unit (r - 1) % p * p + (r + 1) % p }
}
