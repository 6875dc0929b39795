# other.dsl - a second user catalogue for tests/catalogue/test_catalogue.c (ranks that give the same catalogues in
# another order must fail at init). backmesh: every rank sends its unit to every other rank, in one step.
algorithm backmesh implements all_gather {
  units p
  step {
    for t in 1 .. p - 1 {
      send unit r to (r - t) % p
    }
  }
}
