# samering.dsl - algos.dsl's pipeline all_gather without its `require uniform()`: right on every layout of equal
# groups, wrong on unequal ones. The verifier's counterexample must say what to add (issue 18, item 5).
algorithm samering implements all_gather {
  units p
  let S = groups(), L = size(group(r)), s = group(r), l = index(r)
  from { member(s, j) : j in 0 .. L - 1 }
  from { member((s - 1) % S, l), member((s + 1) % S, l) }
  step t in 0 .. S - 1 {
    let c = member((s - t) % S, l)
    if t < S - 1 { send unit c to member((s + 1) % S, l) }
    for j in 1 .. L - 1 { send unit c to member(s, (l + j) % L) }
  }
}
