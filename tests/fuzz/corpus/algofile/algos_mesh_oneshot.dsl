algorithm mesh_oneshot implements all_reduce {
  units 1 scratch p
  from all
  if p > 1 {
    step {
      for t in 1 .. p - 1 { send unit 0 to (r + t) % p at unit 1 + r }
      send unit 0 to r at unit 1 + r
    }
    step { for k in 1 .. p - 1 { send unit 1 + k to r at unit 1 reduce } }
    step { send unit 1 to r at unit 0 }
  }
}
