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
algorithm level0 implements reduce_scatter { phase reduce_scatter using mesh }
algorithm level0 implements all_gather { phase all_gather using mesh }
algorithm level0 implements all_reduce { phase all_reduce using mesh }
algorithm level0 implements broadcast { phase broadcast using mesh }
algorithm level0 implements reduce { phase reduce using mesh }
algorithm level0 implements scatter { phase scatter using mesh }
algorithm level0 implements gather { phase gather using mesh }
