# phases on sub-communicators: what sema rejects.
algorithm ring implements all_reduce, reduce_scatter, broadcast {
  units p
}
algorithm a implements all_reduce {
  units p
  phase all_reduce within 3 using ring
  phase all_reduce within size(r) using ring
  phase all_reduce within group(r) using nosuch
  phase all_gather within group(r) using ring
  phase all_reduce within group(r) root 0 using ring
  phase all_reduce within index(r) units r : 0 .. 1 using ring
  phase all_reduce within group(r, 1) using ring
  step { phase all_reduce within group(r) using ring }
  phase all_reduce within group(q) units b : b .. b using ring
  phase all_reduce within group(r) units b : b .. c using ring
  phase all_reduce within { x : x in 0 .. p - 1 } units b : b .. b using ring
  phase all_reduce within all units b : x .. b using ring
}
