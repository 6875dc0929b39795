# expect: fromlast broadcast is wrong for p = 2, root 0: at step 0 rank 1 sends unit 0 to rank 0 but holds no data for it
# ranks: 1..8
# Right for the last root only (root p - 1), so the last root tried passes: the verdict must still be the first
# failing root's, said once (the root loop once went on past an error, printed one per root, and the last root's
# pass made the whole verify succeed).
algorithm fromlast implements broadcast {
  units 1
  step t in 0 .. p - 2 {
    if r == p - 1 { send unit 0 to t }
  }
}
