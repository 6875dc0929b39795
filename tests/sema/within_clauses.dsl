# phases on sub-communicators: clauses the parser rejects (each reported, the file still read to its end).
algorithm a implements all_reduce {
  units p
  phase all_reduce within group(r) units 0 .. 1 units 2 .. 3 using ring
  phase all_reduce within group(r) frobnicate 1 using ring
  phase broadcast within group(r) root 0 root 1 using ring
}
