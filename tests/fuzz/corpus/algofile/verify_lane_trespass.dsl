# expect: a send of units 3..3 outside its lane's units (lanes must keep to their own units)
# ranks: 2..2
# A lane's sends must keep to its units: lane 0 owns units 0..1 but its all_reduce runs on units 2..3, which lane 1
# reduces in the same steps (a hazard the lanes rule out by construction).
algorithm trespass implements all_reduce {
  units 4
  split {
    lane 0 .. 1 { phase all_reduce within all units 2 .. 3 using ring }
    lane 2 .. 3 { phase all_reduce within all units 2 .. 3 using ring }
  }
}
algorithm ring implements all_reduce {
  units p
  step t in 0 .. p - 2 { send unit (r - 1 - t) % p to (r + 1) % p reduce }
  step t in 0 .. p - 2 { send unit (r - t) % p to (r + 1) % p }
}
