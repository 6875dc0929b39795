algorithm pipeline implements all_gather {
  units p
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  require uniform()
  from { member(s, j) : j in 0 .. L - 1 }
  from { member((s - 1) % S, l), member((s + 1) % S, l) }
  step t in 0 .. S - 1 {
    let c = member((s - t) % S, l)
    if t < S - 1 { send unit c to member((s + 1) % S, l) }
    for j in 1 .. L - 1 { send unit c to member(s, (l + j) % L) }
  }
}
algorithm pipeline implements reduce_scatter {
  units p
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  require uniform()
  from { member(s, j) : j in 0 .. L - 1 }
  from { member((s - 1) % S, l), member((s + 1) % S, l) }
  step t in 0 .. S - 1 {
    for j in 1 .. L - 1 { send unit member((s + 1 + t) % S, (l + j) % L) to member(s, (l + j) % L) reduce }
    if t >= 1 { send unit member((s + t) % S, l) to member((s - 1) % S, l) reduce }
  }
}
algorithm pipeline implements all_reduce {
  units p
  phase reduce_scatter using pipeline
  phase all_gather using pipeline
}
