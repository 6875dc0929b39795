# expect: at step 0 rank 1 reduces into unit 0, which it does not hold
# ranks: 2..8
# Holding: all_gather data is reduced into a unit the receiver never had.
algorithm merge implements all_gather {
  units p
  step { if r == 0 { send unit 0 to 1 reduce } }
}
