algorithm mesh implements reduce_scatter {
  from all
  units p
  step {
    for t in 1 .. p - 1 {
      send unit (r + t) % p to (r + t) % p reduce
    }
  }
}
algorithm mesh implements all_gather {
  from all
  units p
  step {
    for t in 1 .. p - 1 {
      send unit r to (r + t) % p
    }
  }
}
algorithm mesh implements all_reduce {
  units p
  phase reduce_scatter using mesh
  phase all_gather using mesh
}
algorithm mesh implements scatter {
  units p
  from { root }
  step { if r == root { for t in 1 .. p - 1 { send unit (r + t) % p to (r + t) % p } } }
}
algorithm mesh implements gather {
  from all
  units p
  step { if r != root { send unit r to root } }
}
algorithm mesh implements broadcast {
  units p
  phase scatter using mesh
  phase all_gather using mesh
}
algorithm mesh implements reduce {
  units p
  phase reduce_scatter using mesh
  phase gather using mesh
}
algorithm mesh implements all_to_all {
  from all
  units p * p
  step { for t in 1 .. p - 1 { send unit r * p + (r + t) % p to (r + t) % p } }
}
algorithm mesh_det implements reduce_scatter {
  units p scratch p
  from all
  fn slot(i) = if i == 0 then r else p + i
  let P = pow2(floor_log2(p))
  step { for t in 1 .. p - 1 { send unit (r + t) % p to (r + t) % p at unit p + t } }
  if p > P {
    step { for i in 0 .. p - P - 1 { send unit slot(i + P) to r at unit slot(i) reduce } }
  }
  for j in 1 .. floor_log2(p) {
    let h = P / pow2(j)
    step { for i in 0 .. h - 1 { send unit slot(i + h) to r at unit slot(i) reduce } }
  }
}
algorithm mesh_det implements all_reduce {
  units p scratch p
  phase reduce_scatter using mesh_det
  phase all_gather using mesh
}
