"""Scene data model, loaders and lookups."""

from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Scene, Task, TaskBank

__all__ = ["Scene", "Task", "TaskBank", "SceneIndex"]
