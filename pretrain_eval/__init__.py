"""The lab beside the library: label-set evaluation of the data stages and the offline builds of the models the
library ships. It imports `pretrain_core`, never the other way round, and needs the `eval` extra."""
