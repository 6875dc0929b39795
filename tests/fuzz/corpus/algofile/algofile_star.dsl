# star.dsl - an algorithm file loaded at run time (STITCH_ALGO_FILE, stitch_catalogue_load) by the algofile tests;
# algos.dsl has no `star`. Every rank's vector is one unit: ranks 1..p-1 reduce theirs into rank 0, one per step
# (a unit takes one reduction per step), then rank 0 sends the sum to all of them in one step.
algorithm star implements all_reduce {
  units 1
  step t in 1 .. p - 1 {
    if r == t { send unit 0 to 0 reduce }
  }
  step {
    if r == 0 { for q in 1 .. p - 1 { send unit 0 to q } }
  }
}

# The same shape for broadcast from any root: the root sends to every other rank in one step.
algorithm star implements broadcast {
  units 1
  step {
    if r == root { for t in 1 .. p - 1 { send unit 0 to (root + t) % p } }
  }
}
