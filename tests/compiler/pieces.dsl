# pieces.dsl - SUB_PIECES (core/st_steptab.h): the unit pieces of a phase on a sub-communicator are built once per
# instantiation and key (the values of the lets and loop variables they read) and shared by every rank with that
# key; pieces that read r, root, or a function that does, are built by every rank. Each algorithm is a two-level
# reduce_scatter (a phase inside every group, then one across the same-index ranks) whose second phase's pieces
# reach index(r) a different way; tests/compiler/pieces_check.c pins which phases carry the promise (the
# `# promise:` line above each algorithm, one + or - per phase in order), and `stitchc verify` fails wherever
# pieces were shared between ranks whose pieces differ (a key missing a slot, or keys not compared). A `# memo:`
# line says the same of the MEMO regions (lets and loop bounds that call a function).
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

# promise: ++
algorithm let_chain implements reduce_scatter {        # keyed by S2 and by l2, which reaches r through l
  require uniform()
  let S = groups(), S2 = S + 0, l = index(r), l2 = l * 1
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S2 - 1 } using ring
  phase reduce_scatter within index(r) units h : member(h, l2) .. member(h, l2) using ring
}

# promise: +-
algorithm through_fn implements reduce_scatter {       # col reads nothing of the rank; own reads r itself
  require uniform()
  let S = groups()
  fn col(h, k) = member(h, k)
  fn own(h) = member(h, index(r))
  units p
  phase reduce_scatter within group(r) units k : { col(h, k) : h in 0 .. S - 1 } using ring
  phase reduce_scatter within index(r) units h : own(h) .. own(h) using ring
}

# promise: ++
algorithm through_let implements reduce_scatter {      # mine reads the let l: keyed by it
  require uniform()
  let S = groups(), l = index(r)
  fn mine(h) = member(h, l)
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S - 1 } using ring
  phase reduce_scatter within index(r) units h : mine(h) .. mine(h) using ring
}

# promise: ++
algorithm loop_var implements reduce_scatter {         # keyed by the loop's variable
  require uniform()
  let S = groups()
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S - 1 } using ring
  for l in index(r) .. index(r) {
    phase reduce_scatter within index(r) units h : member(h, l) .. member(h, l) using ring
  }
}

# promise: +++
algorithm branch implements reduce_scatter {           # a branch taken by rank: each phase keyed by its own l
  require uniform()
  let S = groups()
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S - 1 } using ring
  if index(r) == 0 { let l = 0
    phase reduce_scatter within index(r) units h : member(h, l) .. member(h, l) using ring }
  else { let l = index(r)
    phase reduce_scatter within index(r) units h : member(h, l) .. member(h, l) using ring }
}

# Lets and loop bounds that call a function are MEMO regions, keyed likewise; one whose function reads r is not.
# memo: -+
# promise: ++
algorithm memo_rank implements reduce_scatter {
  require uniform()
  fn idx(x) = index(r) + x
  fn twice(x) = 2 * x
  let l = idx(0), S = twice(groups()) / 2
  units p
  phase reduce_scatter within group(r) units k : { member(h, k) : h in 0 .. S - 1 } using ring
  phase reduce_scatter within index(r) units h : member(h, l) .. member(h, l) using ring
}
