# expect: send to rank 2, outside 0..1 (p = 2, rank 0)
# ranks: 2..8
# Range: a peer outside 0 .. p-1 (no `% p`).
algorithm offby implements all_gather {
  units p
  step t in 0 .. p - 2 {
    send unit (r - t) % p to r + 1 + t + 1
  }
}
