# ranks: 1..12
# The level queries (docs/language.md, section 4): one all_gather for any number of levels. Step 0 spreads each
# rank's unit in its server; step k (k >= 1) has the first rank of each level k-1 group send that group's units
# to the ranks of its level k group outside it. Groups may be unequal, and a group of one works. Verified over
# the uniform groupings of the range and the default sweep of one-, two- and three-level layouts.
algorithm levels_ag implements all_gather {
  units p
  step { for i in 0 .. size(group(r)) - 1 { if member(group(r), i) != r { send unit r to member(group(r), i) } } }
  for k in 1 .. levels() - 1 {
    let h = group(r, k - 1), g = group(r, k)
    step { if index(r, k - 1) == 0 {
      for i in 0 .. size(g, k) - 1 {
        let x = member(g, i, k)
        if group(x, k - 1) != h { send { member(h, j, k - 1) : j in 0 .. size(h, k - 1) - 1 } to x }
      }
    } }
  }
}
