# Phases that reach their own algorithm would recurse forever.
algorithm c implements reduce_scatter {
  phase reduce_scatter using d
}
algorithm d implements reduce_scatter {
  phase reduce_scatter using c
}
