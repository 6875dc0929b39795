# clash.dsl - defines all_gather 'ring', which algos.dsl defines too: giving it to a communicator must fail at init
# naming both files (tests/catalogue/test_catalogue.c).
algorithm ring implements all_gather {
  units p
  step t in 0 .. p - 2 {
    send unit (r - t) % p to (r + 1) % p
  }
}
