# emit verifies before it writes: `short` compiles but stops a step early, so rank r misses one block for p >= 2
# (p = 1 needs no step). `ring` is right; its `verified` line must not be printed when emit fails.
algorithm ring implements all_gather {
  units p
  step t in 0 .. p - 2 {
    send unit (r - t) % p to (r + 1) % p
  }
}

algorithm short implements all_gather {
  units p
  step t in 0 .. p - 3 {
    send unit (r - t) % p to (r + 1) % p
  }
}
