# expect: at step 0 unit 0 of rank 2 is written by rank 0 and by rank 1, and one of them copies
# ranks: 3..8
# Write/write: two ranks copy into the same unit in one step.
algorithm clash implements all_reduce {
  units 1
  step { if r < 2 { send unit 0 to 2 } }
}
