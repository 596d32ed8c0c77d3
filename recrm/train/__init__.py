"""Reward-model training: SFT judges (TRL), the listwise cross-encoder and the behaviour classifier."""

from recrm.dimensions import dimension
from recrm.train.config import TASKS, RMTrainConfig

__all__ = ["TASKS", "RMTrainConfig", "train"]


def train(cfg: RMTrainConfig, training_overrides: dict | None = None):
    """Train the scorer ``cfg.task`` names and return the folder it was saved to.

    Ranking and behaviour take ``cfg.head``: the classifier heads, the generative yes/no
    (1/0) model, or ``select``: both, the better one on held-out records kept (``recrm.train.select``)."""
    model = dimension(cfg.task).model  # what the dimension trains as (recrm.dimensions)
    if model == "judge":
        from recrm.train.judge import train_judge

        return train_judge(cfg, training_overrides)
    if cfg.head == "generative":
        from recrm.train.judge import train_judge

        return train_judge(cfg, training_overrides, generative=True)
    if cfg.head == "select":
        from recrm.train.select import train_and_select

        return train_and_select(cfg, training_overrides, train)
    if model == "cross_encoder":
        from recrm.train.ranker import train_ranker

        return train_ranker(cfg, training_overrides)
    from recrm.train.behavior import train_behavior

    return train_behavior(cfg, training_overrides)
