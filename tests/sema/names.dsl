# Every error of this file is reported in one run.
algorithm a implements all_reduce {
  units p
  let x = 1
  let x = 2
  step { send unit grp to r + 1 }
  step { send unit x to pow2 }
  let y = floor_log2(1, 2) + f(3)
  fn g(n) = n + 1
  let z = g
  send all to 0
  step { step { } }
  step { units 4 }
  let p = 3
  for i in 0 .. i { }
}
algorithm b implements allreduce, all_gather {
  units p
  step { if r > 0 { fn h(q) = q } }
  phase all_gather using nowhere
  phase everything using a
}
algorithm b implements all_gather {
  units p
}
