algorithm a implements all_reduce {
  units p
  step { send all to r }

algorithm b implements all_gather {
  units p
}
