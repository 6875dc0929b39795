# even.dsl - a ring all_gather that only runs on an even number of ranks: stitch_comm_set_algorithm must refuse it
# on 3 ranks with its require's line, not accept it and abort the first call (issue 18, item 5).
algorithm evenring implements all_gather {
  require p % 2 == 0
  units p
  from { (r - 1) % p }
  step t in 0 .. p - 2 {
    send unit (r - t) % p to (r + 1) % p
  }
}
