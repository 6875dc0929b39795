# levels.dsl - the level all_gather of tests/verify/ok/levels_all_gather.dsl (verified there), and its broken copy of
# tests/verify/levels_two_only.dsl under another name, for tests/runtime/test_topology.c: on a three-level topology
# the runtime must give levels_ag the right data and levels_ag2 wrong data, which only holds when every level
# reaches the schedule. (Compiled with NO_VERIFY: levels_ag2 is wrong on purpose.)
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

algorithm levels_ag2 implements all_gather {
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
