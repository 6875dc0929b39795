# expect: at step 0 rank 0 sends unit 1 to rank 1 but holds no data for it
# ranks: 2..8
# Holding: all_gather's rank 0 forwards a block it never received.
algorithm eager implements all_gather {
  units p
  step { send unit (r + 1) % p to (r + 1) % p }
}
