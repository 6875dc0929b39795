# expect: at step 0 rank 1 sends unit 0 while it also receives it in the same step (from rank 0): read/write hazard
# ranks: 3..8
# Hazard: a rank forwards a partial sum in the very step it receives it.
algorithm chain implements all_reduce {
  units 1
  step { if r < p - 1 { send unit 0 to r + 1 reduce } }
}
