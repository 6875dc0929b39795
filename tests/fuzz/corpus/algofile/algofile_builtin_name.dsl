# builtin_name.dsl - defines `ring` for all_reduce, which algos.dsl already has: init must refuse it, naming both.
algorithm ring implements all_reduce {
  units 1
  step t in 1 .. p - 1 {
    if r == t { send unit 0 to 0 reduce }
  }
  step {
    if r == 0 { for q in 1 .. p - 1 { send unit 0 to q } }
  }
}
