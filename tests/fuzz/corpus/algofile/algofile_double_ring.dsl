# double_ring.dsl - a second run-time algorithm file (a rank that loads it instead of star.dsl must fail init).
# The vector is cut in 2p units: the first half goes round the ring to the right, the second to the left.
algorithm double_ring implements all_reduce {
  units 2 * p
  step t in 0 .. p - 2 {
    send unit (r - t) % p to (r + 1) % p reduce
    send unit p + (r + t) % p to (r - 1) % p reduce
  }
  step t in 0 .. p - 2 {
    send unit (r + 1 - t) % p to (r + 1) % p
    send unit p + (r - 1 + t) % p to (r - 1) % p
  }
}
