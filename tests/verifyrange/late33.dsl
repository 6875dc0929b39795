# late33.dsl - a ring all_gather that is right up to p = 32 and wrong from p = 33 on: its last step is left out
# there, so every rank misses one block. Compiled with stitch_add_dsl's default range (1..32) it verifies; a
# communicator of 33 ranks must then prove it for its own p (and refuse it) instead of running it (issue 18, item 2).
algorithm late33 implements all_gather {
  units p
  from { (r - 1) % p }
  step t in 0 .. p - 2 {
    if p <= 32 or t < p - 2 { send unit (r - t) % p to (r + 1) % p }
  }
}
