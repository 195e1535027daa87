"""How ranks share a run: the layout, the device mesh and its wrappers, pipeline, tensor, context and expert
parallelism, and the planner."""
