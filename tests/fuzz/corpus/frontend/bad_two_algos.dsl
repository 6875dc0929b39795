# Two broken algorithms: both errors are reported, the good one between them parses.
algorithm a implements all_reduce {
  units p
  step { send all to }
}
algorithm ok implements all_gather { units p }
algorithm b implements reduce_scatter {
  for i in 0 p { }
}
