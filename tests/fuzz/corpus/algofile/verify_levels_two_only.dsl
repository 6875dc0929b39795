# expect: levels_ag all_gather is wrong for p = 2 as [1],[1]: after the last step unit 1 of rank 0 holds nothing
# ranks: 1..12
# Broken: the level all_gather of ok/levels_all_gather.dsl stopped at level 1. Every p of the range and every
# two-level layout verifies; the sweep's three-level layouts catch it.
algorithm levels_ag implements all_gather {
  units p
  step { for i in 0 .. size(group(r)) - 1 { if member(group(r), i) != r { send unit r to member(group(r), i) } } }
  for k in 1 .. min(levels() - 1, 1) {   # BUG: stops after two levels
    let h = group(r, k - 1), g = group(r, k)
    step { if index(r, k - 1) == 0 {
      for i in 0 .. size(g, k) - 1 {
        let x = member(g, i, k)
        if group(x, k - 1) != h { send { member(h, j, k - 1) : j in 0 .. size(h, k - 1) - 1 } to x }
      }
    } }
  }
}
