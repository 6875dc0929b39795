# expect: whose 3 blocks need units to be a multiple of 3, but it declares 4
# ranks: 3..3
# Contract: reduce_scatter's units must split into p blocks.
algorithm coarse implements reduce_scatter {
  units 4
  step { }
}
