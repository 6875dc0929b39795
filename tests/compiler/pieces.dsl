# pieces.dsl - SUB_PIECES (core/st_steptab.h): the unit pieces of a phase on a sub-communicator are built once per
# instantiation and shared by every rank only where nothing in them differs between ranks. Each algorithm is a
# two-level reduce_scatter (a phase inside every group, then one across the same-index ranks) whose second phase's
# pieces reach index(r) a different way; tests/compiler/pieces_check.c pins which phases carry the promise (the
# `# promise:` line above each algorithm, one + or - per phase in order), and `stitchc verify` fails wherever a
# rank-dependent piece were shared.
algorithm ring implements reduce_scatter {
  units p
  step t in 0 .. p - 2 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}

# promise: +-
algorithm direct implements reduce_scatter {
  require uniform()
  let S = groups()
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S - 1 } using ring
  phase reduce_scatter within index(r) units h : member(h, index(r)) .. member(h, index(r)) using ring
}

# promise: +-
algorithm let_chain implements reduce_scatter {        # rank-free lets stay so through others; l2 does not
  require uniform()
  let S = groups(), S2 = S + 0, l = index(r), l2 = l * 1
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S2 - 1 } using ring
  phase reduce_scatter within index(r) units h : member(h, l2) .. member(h, l2) using ring
}

# promise: +-
algorithm through_fn implements reduce_scatter {       # col reads nothing of the rank, mine reads the let l
  require uniform()
  let S = groups(), l = index(r)
  fn col(h, k) = member(h, k)
  fn mine(h) = member(h, l)
  units p
  phase reduce_scatter within group(r) units k : { col(h, k) : h in 0 .. S - 1 } using ring
  phase reduce_scatter within index(r) units h : mine(h) .. mine(h) using ring
}

# promise: +-
algorithm loop_var implements reduce_scatter {         # a loop's variable counts as the rank's
  require uniform()
  let S = groups()
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S - 1 } using ring
  for l in index(r) .. index(r) {
    phase reduce_scatter within index(r) units h : member(h, l) .. member(h, l) using ring
  }
}

# promise: ++-
algorithm branch implements reduce_scatter {           # a branch taken by rank: l = 0 is the same wherever it runs
  require uniform()
  let S = groups()
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S - 1 } using ring
  if index(r) == 0 { let l = 0
    phase reduce_scatter within index(r) units h : member(h, l) .. member(h, l) using ring }
  else { let l = index(r)
    phase reduce_scatter within index(r) units h : member(h, l) .. member(h, l) using ring }
}
