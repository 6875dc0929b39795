# ingroup.dsl - a topology-aware all_reduce that only reduces inside each rank's group (level 0): right when the
# communicator has one group, wrong with two or more. The loader must verify it on the communicator's own groups.
algorithm ingroup implements all_reduce {
  units 1
  let g = group(r), L = size(group(r)), i = index(r)
  step t in 1 .. L - 1 {
    if i == t { send unit 0 to member(g, 0) reduce }
  }
  step {
    if i == 0 { for q in 1 .. L - 1 { send unit 0 to member(g, q) } }
  }
}
