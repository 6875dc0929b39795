# expect: from_zero scatter is wrong for p = 2, root 1: at step 0 rank 0 sends unit 1 to rank 1 but holds no data for it
# ranks: 1..8
# A rooted algorithm that never reads `root`: it is right for root 0 only. Verify must try every root anyway.
algorithm from_zero implements scatter {
  units p
  step { if r == 0 { for q in 1 .. p - 1 { send unit q to q } } }
}
