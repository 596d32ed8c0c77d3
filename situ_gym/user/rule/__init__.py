"""The rule-based shopper, in small pieces: persona policy, episode state, disclosure,
product decision, navigation, speech, and the shopper that ties them together."""

from situ_gym.user.rule.persona import Persona
from situ_gym.user.rule.shopper import RuleBasedUser

__all__ = ["Persona", "RuleBasedUser"]
