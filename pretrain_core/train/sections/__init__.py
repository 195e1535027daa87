"""The train config's sections: each a validated model of one component's settings that checks only itself and
builds what it configures (`TrainConfig` in `train/config.py` composes them and checks how they meet)."""
