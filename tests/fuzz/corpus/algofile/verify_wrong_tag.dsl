# expect: at step 1 rank 1 reduces unit 0's data (from rank 1) into unit 1, which holds unit 1's data
# ranks: 2..8
# Identity: a copy parked in scratch is reduced into the wrong unit.
algorithm mixup implements reduce_scatter {
  units p scratch 1
  step { if r == 0 { send unit 0 to 1 at unit p } }
  step { if r == 1 { send unit p to 1 at unit 1 reduce } }
}
