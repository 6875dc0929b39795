# expect: the runtime would refuse it: at step 0 rank 0 would receive unit 7 (block 7: from rank 2 to rank 1), which it has no storage for
# ranks: 3..3
# Storage: an all_to_all that passes block (r, r+2) through rank r+1 with no scratch. The abstract data flow is
# right, but rank r+1 keeps only its own row and column, so the runtime refuses the plan; verify must too.
algorithm relay implements all_to_all {
  units p * p
  step {
    send unit r * p + (r + 1) % p to (r + 1) % p
    send unit r * p + (r + 2) % p to (r + 1) % p
  }
  step { send unit (r - 1) % p * p + (r + 1) % p to (r + 1) % p }
}
