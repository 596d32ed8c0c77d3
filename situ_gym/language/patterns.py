"""Cue phrases of the utterance analysis, kept as data apart from the code that applies them.

Each table maps a reading (a slot asked, a relation, a stance ...) to regular expressions over
the normalised, lower-cased sentence. Every pattern is covered by an example in the corpus
under tests/language/.
"""

from __future__ import annotations

import re

__all__ = [
    "STOCK_PHRASES",
    "CLAIM_SENTENCE_END", "CLAIM_PRICE", "BUDGET_WORDS", "REFERRING_PRONOUNS", "PREFERENCE_WORDS", "PLACE_PREPOSITIONS", "CART_CLAIM", "HAND_CLAIM", "BUDGET_CLAIM",
    "MARKER_LABEL", "INTERNAL_JARGON", "ABOUT_THE_SHOPPER", "JUDGE_JARGON", "CATALOG_ID",
    "ACCEPT", "THANKS", "INFO_REQUEST", "BUDGET_BOUND", "CLAIMS", "CLARIFY", "CLOSING", "COMPARE",
    "DIRECTION", "DISTANCE", "GREETING", "MOTION", "NEGATION", "NOT_PROPOSED", "OVER_LIMIT", "REFUSED",
    "CHOICE_WORDS", "OR_SOMETHING_ELSE", "PROPOSE", "PURCHASE", "REASON", "RECONSIDER", "HANDLE_REJECTION", "COMPARATIVE", "REJECT", "NOT_A_REJECTION", "HESITATION", "PET_LABEL", "RELATION", "REQUESTS", "SLOTS",
]


def _re(*parts: str) -> re.Pattern[str]:
    return re.compile(r"(?:" + "|".join(parts) + r")")


def _words(*phrases: str) -> re.Pattern[str]:
    # whole words at the phrase's edges: a "\b" there would demand a word character next to a
    # phrase that starts or ends with punctuation ("take it?" at the end of a text never matched)
    return re.compile(r"(?:(?<!\w)|(?=\W))(?:" + "|".join(phrases) + r")(?:(?!\w)|(?<=\W))")


THANKS = _words(r"thanks?", r"thank you", r"cheers", r"great", r"perfect", r"appreciate\w*", r"wonderful", r"lovely")
GREETING = _re(  # at the start of any sentence, drawn out or after a filler: "Great to see you! Hi, welcome in.",
    # "heyyy welcome 👋", "oh hi there"; "welcome" anywhere but in "you're welcome"
    r"(?:^|(?<=[.!?]\s))(?:(?:oh|well|um|uh|ah)\W+)?(?:h+i+|hel+o+|he+y+|hiya|howdy|greetings|good (?:morning|afternoon|evening|day))\b",
    r"(?<!you're )(?<!youre )(?<!you are )(?<!very )\bwelcome\b",
)
CLOSING = _words(
    r"good ?bye", r"bye", r"that'?s (?:all|it for (?:today|now))", r"that is all", r"i'?ll leave it", r"i will leave it",
    r"i'?m done", r"i am done", r"i'?m going to stop", r"never mind", r"not interested", r"i give up", r"no,? thanks?,? (?:i'?m|that'?s)", r"have a (?:great|nice|good|lovely|wonderful) (?:day|one|time|evening|weekend)",
    r"enjoy (?:your|the)", r"thanks? (?:you )?for (?:shopping|coming|visiting|stopping)", r"happy shopping",
    r"take care", r"see you",
)
INFO_REQUEST = _words(r"tell(?:ing)? me(?:,? please,?)? (?:what|which|how|about|for which|a bit|more about|whatever|the|your|ur)\b", r"say me(?:,? please,?)? (?:first )?(?:the|what|which|where|how)", r"let me know (?:what|which|how|if|about)", r"if (?:you have|there'?s|you've got) [^.!?]{1,40}?,? (?:just )?let me know", r"could you share", r"can you share", r"i'd love to know", r"i'm curious", r"just say what")

# The departments a shop is walked by, said as what the shopper came for.
_DEPARTMENT = (r"(?:food|groceries|grocery|household(?: stuff| things| goods)?|home stuff|things of the house|cleaning(?: stuff)?|cleaners"
               r"|furniture|decor|decoration|lighting|lights|lamps|plants|drinks|pet (?:stuff|food|things)|toiletries|textiles|seating|storage(?: stuff)?)")
# What a diet keeps out, and the labels that say so ("gluten free", "gf", "no salt added").
_INGREDIENT = r"dairy|gluten|nuts?|peanuts?|eggs?|wheat|soy|caffeine|sugar|salt|meat|shellfish|lactose|grains?"
_FREE_OF = rf"(?:{_INGREDIENT})[- ]free|gf|df|vegan|vegetarian|decaf|low[- ](?:salt|sugar|fat|sodium)|no[- ](?:salt|sugar)(?: added)?"
# A label a product must have for pets: "pet-safe", "pet friendly", "safe for cats", "fabric for pet"
_PET_LABEL = r"pet[- ]?(?:safe|friendly|proof)|(?:safe|fabric|good) (?:for|with|around) (?:pets?|cats?|dogs?)"
PET_LABEL = _words(_PET_LABEL)
# Slots a question asks about (checked in this order; several may hold).
SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("category", _words(
        r"looking for", r"shopping for", r"searching for", r"hunting for", r"here for", r"in the market for",
        r"help you find", r"can i help", r"how can i help", r"what (?:brings|is bringing) (?:you|u)",
        r"(?:you|u) need something for the (?:house|home|kitchen|garden)", r"need today", r"want today",
        r"what (?:do|would) you (?:need|want|like) to (?:buy|get|pick up|find)",
        r"what (?:do|would) you (?:need|want)(?: to get)?(?: today)?\??$", r"what (?:you|u)(?:'re| are| r)? (?:need|after|looking)",
        r"what you need", r"what can i (?:help|get|find)", r"what kind of (?:product|item|thing)s?", r"what type of (?:product|item)s?",
        r"what are (?:you|we) (?:after|buying|getting|picking up)", r"on your (?:list|shopping list|mind)",
        r"what (?:would you like|are you hoping) to (?:buy|get|find)", r"what did you come in for", r"picking up",
        r"what (?:sort|kind|type) of (?:thing|things|items?|products?)", r"anything in particular", r"something specific",
        r"particular (?:product|item|thing)", r"just browsing", r"item on your mind", r"what you(?:'re| are) after",
        r"what we(?:'re| are) (?:looking|after)", r"what (?:do|can) (?:i|we) get you", r"hoping to find", r"track(?:ing)? down", r"still want",
        r"do you mean (?:a |an |the |real )?[a-z ]+,? or (?:a |an |the )?[a-z ]+", r"what you(?:'re| are) hoping",
        # informal and non-native forms
        r"on (?:the|your|ur) (?:shopping )?list", r"list (?:for )?today", r"what (?:you|u) (?:are|r) (?:needing|wanting|searching|looking)", r"what (?:do|did) (?:you|u) need", r"what (?:you|u) (?:want|need|search|look)\w*",
        r"which (?:product|thing|item)s? (?:you|u)", r"what \+", r"what(?:'re| are) (?:we|you) (?:after|hunting|looking|shopping)",
        r"(?:looking|shopping|searching) for what", r"what(?: is)? the thing you", r"what (?:you|u) (?:have|got) in (?:the )?mind",
        r"(?:which|what) (?:kind|sort|type) (?:of )?(?:food|snack|drink|furniture|lamp|light|chair|desk|sofa|product|thing)s?",
        r"what do u need", r"what (?:can|shall) (?:i|we) find", r"(?:need|want|after) what",
        r"(?:want|wanna|need) to (?:buy|get|pick up)", r"what(?:'re| are| r) (?:we|u|you) (?:grabbing|getting|buying|picking up)", r"\blist\W*$", r"(?:your|ur|the) items?\b", r"what things? (?:you|u)",
        r"what(?:'s| is) the (?:mission|plan|goal|project)", r"what (?:are|r) (?:you|u) after", r"shopping mission",
        r"what (?:you|u) (?:like|want|wanna|need) to (?:buy|get|cook|make|find)", r"^\W*list\W*$", r"what piece",
        r"which (?:furniture|piece|product|thing|item)s? (?:you|u)", r"how can i help",
        # the store's departments as the options: "food or household stuff today?", "furniture or decor?"
        rf"(?P<dept>{_DEPARTMENT})(?:\s+(?:today|then|now))?,?\s+(?:or|/)\s+(?:[a-z']+\s+){{0,4}}?(?!(?P=dept)\b){_DEPARTMENT}",
        # "what furniture you need": a kind of thing, not a slot word, asked for
        r"what (?!(?:size|colou?r|flavou?r|budget|price|style|material|brand|room|do|does|did|would|will|can|could|should|are|is|r)\b)"
        r"[a-z]+ (?:you|u) (?:need|want|search|look)\w*")),
    ("use", _words(
        r"what(?:'s| is| will)? (?:it|that|this|they) (?:be )?for", r"what (?:do|will|would) you (?:need|want|use) (?:it|them|that|the [a-z ]+) for",
        r"use (?:it|them|this|that|the [a-z ]+) for", r"using (?:it|them)", r"used for", r"occasion", r"purpose", r"who is it for",
        r"who's it for", r"for whom", r"who (?:is|are) (?:it|they|this) for", r"intend\w*", r"what are you (?:making|cooking|planning)",
        r"planning (?:on|to) (?:use|make|cook|serve)", r"what (?:room|space)", r"which room", r"where will (?:it|you)",
        r"(?:is|are) (?:it|this|that|they|these|the [a-z' ]+) for", r"for yourself", r"or (?:for|to keep)\b",
        r"need it for", r"want it for", r"for a party", r"gift", r"which room", r"particular room", r"what room",
        r"what for", r"what it'?s for", r"for what (?:is|you|it)", r"what (?:is )?the use", r"for which room", r"anything special",
        r"for (?:breakfast|lunch|dinner|snacks?|school|work|the kids|guests) or", r"(?:for )?what use",
        r"(?:living|dining|bed|bath|kids'?|play) ?room", r"how old", r"(?:keep|store|put) in (?:it|them)",
        r"something special", r"cooking something", r"who (?:are|r) (?:you|u) (?:shopping|buying|getting)",
        r"room (?:you'?re|you are|ur|u r) (?:working on|doing|furnishing|decorating|redoing)",
        r"for (?:reading|cooking|working|sleeping|gaming|relaxing|dining|baking|snacking) or", r"(?:cat|dog|pup|puppy|kitten|kid|child|baby)'?s age",
        r"(?:put|keep|store) inside", r"(?:^|\+\s*)room\W*$",
        # who it feeds, what it is for, how it will be used: "just you or feeding a crowd",
        # "pantry restock or something for tonight?", "puppy, adult or senior?", "what's going in it"
        r"(?:just|only) (?:for )?(?:you|u) or\b", r"feeding a (?:crowd|family|party)", r"for (?:tonight|the week|a crowd|many people|decorat\w+|decor)\b",
        r"restock", r"or (?:just )?refresh\w*", r"(?:cooking|making|baking|serving) (?:with|w/) (?:it|them)",
        r"what(?:'s| is)? go(?:ing|es) in (?:it|them)", r"in one go", r"every day", r"how often", r"long time",
        # the occasion, the recipient, the spot: "party or regular groceries?", "for you or a present
        # for somebody?", "indoor or outdoor?", "bright spot or kinda shady?", "which rooms ..."
        r"part(?:y|ies) (?:or|shopping|food|supplies)\b", r"(?:regular|normal|usual|weekly|weekday|everyday) (?:(?:weekday|week|weekly) )?(?:groceries|shop|shopping|stuff|run|haul)",
        r"\b(?:brunch|picnic|potluck)\b(?: haul| run| shop| or)",
        r"get[- ]together", r"(?:snacks|food|drinks|nibbles) for (?:when )?(?:people|friends|guests|folks)", r"(?:having|have) (?:people|friends|guests) over", r"weeknight",
        r"or (?:another|a different|other|some other) room", r"(?:somewhere|some place|anywhere) else in the (?:house|home|flat)", r"room in particular",
        r"(?:a )?present for", r"or (?:a |it is a )?present\b", r"indoors?(?: or)", r"or outdoors?", r"(?:bright|sunny|shady|dark) (?:spot|corner)",
        r"kinda shady", r"which rooms", r"packed[- ]lunch\w*", r"lunch ?box run", r"(?:shop|shopping|here) for lunch ?box\w*", r"lunch run", r"for what (?:dish|meal|recipe|occasion)", r"what dish", r"packing lunch\w*", r"on the menu",
        r"(?:drink|eat|use|have) (?:it|them) (?:in the|at|for) (?:evenings?|nights?|mornings?|bedtime)",
        # how long it will be used: "how many hours a day will you sit in it", "hrs/day", "all-day sitting"
        r"how many (?:hours|hrs)", r"(?:hours|hrs) (?:a|per|in one|/) ?day", r"hrs/day", r"all[- ]day (?:sitting|use|long)", r"sit (?:many|long|for) hours",
        r"how long (?:are|do|will|would) (?:you|u) (?:be )?sit", r"how long (?:are|r|is|do|will) (?:ur|your|you|u) (?:usual )?(?:sessions?|sit|sitting|gaming|game|play|work|working)\b",
        r"how long (?:you|u) sit", r"long days? in it", r"(?:you|u) or (?:it is |is it )?(?:a present|for somebody|for someone)",
        # who lives with it: "any pets?", "kids or pets at home?", "cats or dogs around?" (a label
        # it must have, "does it need to be pet-safe?", is a preference)
        r"(?<![-\w])(?<!which )(?<!for )pets?(?![- ](?:safe|friendly|proof|food|treats?|stuff|things|beds?|bowls?|toys?|supplies))",
        r"(?:do|does) (?:you|u) have (?:a |any )?(?:cats?|dogs?|kids|pets?)", r"(?:cats?|dogs?) or (?:cats?|dogs?)(?! food| treats?)",
        r"(?:you|u) have (?:a )?(?:cat|dog)\b", r"(?:dogs?|cats?) (?:in the house|at home|around)",
        # the light where it goes: "how much light does the spot get?", "sunny room or kinda dark?",
        # "low light spot or a sunny one?" ("is low light ok?" asks a label: a preference)
        r"(?:how much|a lot of|much|natural) light\b(?! (?:roast|beer|mayo|brown|wood|oak|grey|gray|blue|green|pink))", r"light (?:does|do) (?:the|that|this|your|ur) (?:spot|room|place|corner)",
        r"(?:bright|sunny|shady|dark|dim|low[- ]light) (?:spot|corner|room|place)", r"(?:spot|room|place|corner) (?:is |get |gets )?(?:bright|sunny|dark|dim|shady)")),
    ("budget", _words(
        r"budget", r"spend", r"spending", r"pay", r"price", r"prices", r"priced", r"cost", r"costs", r"afford",
        r"how much (?:do|would|are|can|could|were|did)", r"how much money", r"cheap", r"expensive", r"pricey",
        r"dollars?", r"price range", r"price point", r"upper limit", r"most you'?d", r"(?<!from )(?<!from the )(?<!on the )ceiling(?! (?:lamp|light|pendant|fan|height|fixture))", r"hard limit", r"wiggle room",
        r"stretch", r"how much (?:money )?(?:you|u) (?:want|can|wanna|like)", r"a max", r"max you", r"(?:ur|your|the) max\b")),
    ("avoid", _words(
        r"avoid\w*", r"allerg\w*", r"stay away", r"dislike", r"don'?t (?:want|like|eat|need)", r"can'?t (?:have|eat|use|stand)",
        r"do not want", r"intoleran\w*", r"deal ?-?breakers?", r"rule out", r"rather not", r"off[- ]limits",
        r"sensitive to", r"no-?gos?", r"bugs? (?:you|u)", r"hate", r"hard no", r"upsets?", r"things? to (?:avoid|skip)", r"anything you (?:won'?t|can'?t|don'?t)", r"steer clear",
        r"restrictions?", r"no [a-z]+ at all", r"(?:is|are) [a-z ]{2,20}? (?:a )?(?:problem|issue)", r"any [a-z]+ (?:issues?|problems?)",
        r"[a-z]+ (?:is|are) (?:a )?problem", r"definitely don'?t", r"count too", r"you said no",
        r"cannot (?:eat|have|use)", r"can (?:eat|have|use) [^?]{1,30},? or (?:no|not)\b", r"(?:wanna|want to|trying to|need to) cut\b", r"(?:don'?t|do not) want in", r"without [a-z]+\??$", r"okay with [a-z]+", r"ok with [a-z]+",
        # a diet's requirement asked: "does it need to be gluten-free?", "gf needed?", "caffeine ok?",
        # "is dairy ok for them?", "is he on grain-free?", "anyone off dairy?", "keep the salt down?"
        rf"(?:need|needs|has|have|got) to be (?:{_FREE_OF})", rf"(?:{_FREE_OF}) (?:needed|required)",
        rf"(?:{_INGREDIENT}) (?:is |are )?(?:ok|okay|fine|alright)\s*(?:\?|for\b)", rf"(?:is|are) (?:{_INGREDIENT}) (?:ok|okay|fine|alright)\b",
        rf"\bon (?:a )?(?:{_FREE_OF})", rf"\boff (?:{_INGREDIENT})\b", r"keep (?:the )?(?:salt|sugar|fat) (?:down|low)", rf"need (?:{_FREE_OF})\?",
        # "should it be caffeine-free?", "caffeine cool?", "caffeine ok or nah?", "you drink caffeine,
        # or better without?", "any diet stuff i should know?", "gluten/egg issues?"
        rf"(?:should|must) (?:it|they|this|that) be (?:{_FREE_OF})", rf"(?:{_INGREDIENT}) (?:is |are )?(?:cool|good|fine|ok|okay|alright)\s+(?:or|for)\b",
        rf"(?:{_INGREDIENT}) (?:cool|good)\s*\?", rf"(?:drink|eat|have) (?:{_INGREDIENT}),? or (?:better |rather )?without",
        r"diet (?:stuff|things|issues)", rf"(?:{_INGREDIENT})(?:/(?:{_INGREDIENT}))+ (?:issues?|problems?)",
        rf"(?:need|needs|have|has) (?:no|to avoid) (?:{_INGREDIENT})")),
    ("size", _words(
        r"size", r"sizes", r"how many", r"how big", r"how large", r"how small", r"quantity", r"dimensions?",
        r"how much (?:\w+ )?(?:space|room)", r"how much wall", r"room for", r"fit in", r"servings?", r"how many people", r"family[- ]size",
        r"family pack", r"ounces?", r"oz", r"lb", r"pack size", r"single (?:bag|box|pack|one)", r"bulk", r"large or small", r"small or large",
        r"big or small", r"bigger pack", r"(?:big|small|smaller|bigger|large|larger) (?:\d+ )?(?:bag|box|pack|jar|one|size)",
        r"one box", r"how long", r"wide", r"tall", r"metres?", r"seats?", r"seating for", r"how high",
        r"ceiling height", r"(?:high|low|tall|vaulted) ceilings?",
        r"(?:big|small|smaller|bigger|large|larger) (?:tub|cups?|bottle|can|carton|pouch|loaf|tin)s?",
        r"single piece", r"or a set", r"footprint", r"height", r"compact", r"bulky", r"too big", r"smaller", r"bigger", r"larger",
        r"width", r"depth", r"(?:big|large|regular|small) pack", r"(?:one|a|1|half a|the half) (?:gallon|gal|pound|lb)\b",
        r"or the half")),
    ("location", _words(r"where", r"standing (?:next to|by|at|near)",
                         # options that are places: "by the freezers or near the produce?"
                         r"(?:near|by|next to|at) (?:the )?(?:coolers?|shel(?:f|ves)|freezers?|produce|entrance|door|checkout|signs?)\b",
                         r"which (?:aisle|shelf|section|store|part|area|side|shop)", r"whereabouts", r"part of the store",
                         r"(?:different|another|other) (?:shop|store|section)", r"(?:was|is) it in", r"where you saw")),
    ("preference", _words(
        r"prefer\w*", r"flavou?rs?", r"colou?rs?", r"materials?", r"styles?", r"scents?", r"brands?",
        r"features?", r"pref", r"vibes?\??$", _PET_LABEL, r"furry", r"do (?:you|u) like (?!to\b)", r"must[- ]haves?", r"(?:has|have|must|need|needs) to have", r"important to you", r"requirements?", r"textures?", r"finish", r"roast",
        r"dietary preferences?", r"better fit", r"work better", r"didn'?t you like", r"like about", r"looking for in",
        r"any (?:wishes|preferences|ideas)", r"leaning", r"mood for", r"nice-to-have", r"a must", r"the regular",
        r"go for\?", r"usually (?:go|get|buy)", r"what put you off", r"you'?d change", r"ideal [a-z]+", r"look like",
        r"assembl\w*", r"do you want (?:it|the [a-z ]+) to", r"or the colou?r",
        r"non-?negotiables?", r"must have", r"(?:what|which) matters? (?:more|most)", r"more important", r"\bwhich\?", r"more about the", r"(?:which|what) variety", r"(?:you|u) (?:must|need to) have", r"set on")),
)
# The one option given, or something else: "breakfast stuff or something else today?" (what the
# shopper came for, unless the option is a label: "pink, blue or smth else?")
OR_SOMETHING_ELSE = _words(r"or (?:sth|something|smth|anything|other something|another thing) else\b", r"or other something", r"or (?:sth|something) different\b")
CLARIFY = _words(
    r"right(?=\?)", r"you said", r"would around", r"^(?:is|are|was|were|did|do you (?:need|mean|want (?:the|it|one))|is it|is the|is this)\b[^?]*,? or\b",
    r"just so", r"just checking", r"not sure i follow",
    r"should (?:it|the|this|that)", r"would an? [a-z ]{1,30} (?:work|do)", r"sorry", r"remember", r"say that again",
    r"^so\b", r"wiggle room", r"hard limit", r"a must,? or", r"count too", r"including", r"or (?:is|are) (?:a|an|the)? ?[a-z ]{1,25} (?:fine|okay|ok)",
    r"or for (?:the|a)", r"or was it", r"chocolate bars",
    r"just to (?:confirm|check|be sure|clarify|make sure)", r"to confirm", r"did you (?:mean|say)", r"do you mean",
    r"(?:you|u) mean", r"as in", r"you said", r"you mentioned", r"so you(?:'re| are| want| need)", r"correct(?=\?)", r"right(?=\?)",
    r"is that right", r"is that correct", r"or would you", r"or do you", r"or (?:rather|instead)", r"rather have",
    r"clarify", r"when you say", r"am i right", r"does that mean", r"should i (?:assume|take it)",
    # "wait, is it for you or a gift?", "hold up, ...", "'modern' can mean a lot", a word of the
    # shopper's quoted back ("wait, 'milk' - like dairy or plant?")
    r"^\W*(?:wait|hold up|hang on)\b", r"clarification", r"can mean", r"(?:^|\s)['\u2018\u201c\"][a-z][a-z -]{1,24}['\u2019\u201d\"](?=\W)",
)

PROPOSE = _words(
    r"(?:i|we)(?: would|'d)? advi[sc]e\b", r"advi[sc]e (?:you|u)\b",  # non-native "I advise the lentil"
    r"(?:i|we)(?: would|'d| can)? propose\b", r"propose (?:you|u)\b",  # "For small living room I propose the Hollis"
    r"^or (?:the|a|maybe|perhaps)", r"have you (?:considered|tried|thought about|seen|looked at)", r"could (?:be|work|do)", r"would (?:go|look|fit|work|do)",
    r"might be (?:perfect|right|ideal|great|good|just|a good|the)", r"take (?:the|this|that|these|those)", r"point you (?:to|towards)",
    # an imperative "take" opening a sentence, no article: "Take Stride Athletic Corsa Exercise Bike, 479.99"
    r"(?:^|(?<=[.!?:] ))take (?!care\b|your\b|yours\b|a\b|an\b|it\b|them\b|time\b|my\b|our\b|you\b|u\b|me\b|us\b|off\b|out\b|over\b|home\b|one\b|two\b|three\b|few\b|some\b|\w+ steps?\b|steps?\b|left\b|right\b)(?=[a-z])",
    r"i'?d consider", r"good options?", r"just (?:right|what you)", r"nice fit", r"go nicely", r"worth (?:a|considering|trying)", r"why not", r"maybe (?:the|a|this|that|these|go)",
    r"here'?s (?:one|a|an|the)(?! (?:(?:next|first|last|final|quick|easy|best|plan|\w+ing) )?(?:step|steps|plan|way|route|directions?|deal|idea|thing|catch|tip|trick|situation|summary|update)\b)", r"one that fits", r"perhaps (?:the|a|this)", r"what do you think of", r"how does .{1,60} sound",
    r"recommend\w*", r"suggest\w*", r"how about", r"what about", r"try", r"trying", r"go with", r"go for", r"stick with", r"stay with",
    r"consider", r"check out", r"take a (?:look|peek) at", r"have a look at", r"look at", r"grab", r"pick up",
    r"my (?:pick|choice|suggestion|recommendation)", r"top pick", r"best bet", r"winner",
    r"(?:best|good|great|solid|perfect|ideal|nice|excellent|smart|safe|strong|top|wise) (?:choice|option|match|fit|pick|candidate|bet)",
    r"would (?:suit|work|fit|be (?:great|perfect|ideal|good|nice))", r"you(?:'d| would| might| may|'ll| will) (?:really )?(?:like|love|enjoy|appreciate)(?! to\b)",
    r"worth (?:a look|a try|trying|considering|checking)", r"i'?d (?:go|pick|choose|take|opt)", r"i would (?:go|pick|choose|take|opt)",
    r"(?:fits?|matches|suits?|meets?) (?:what you|your|you|all)", r"ticks? (?:all )?(?:the|your) boxes",
    r"(?:is|are) (?:exactly )?what you(?:'re| are) (?:looking|after)", r"you (?:could|can|should|might want to) (?:get|take|buy|pick|grab|choose|go)",
    r"(?:is|are) (?:a |an )?(?:great|good|perfect|ideal|solid|excellent) (?:one|pick|choice|option|fit|match|for you)",
    r"might (?:suit|work|be (?:right|perfect|ideal|a good))", r"could be (?:just )?(?:right|perfect|ideal|the one|a good)",
    r"would do (?:nicely|the trick|well)", r"fits the bill", r"is the one", r"is your best", r"option for you", r"pick for you",
    r"(?:fits|suits|matches)(?=\s*:)",
    # the side a comparison favours, in any English: "is better for you", "is more good for you"
    r"(?<!there )(?:is|are) (?:much |a lot |even |far )?(?:better|more good|more better|more suitable|more right|the better) (?:for you|choice|option|pick|one|fit|match)",
)
# Words that choose the product named right after them: "-> honeycrisp", "go coconut",
# "i'd pick the calcium one" ("go for", "go with", "grab" are in PROPOSE).
CHOICE_WORDS = ("->", "\u2192", "go", "pick", "choose", "get", "grab")
# A push-back asks the shopper to reconsider what it turned down: "worth a second look?",
# "still in the running?", "maybe don't rule it out yet", "Maybe you keep it?"
RECONSIDER = _words(
    r"(?:second|2nd|another|one more) (?:look|chance)", r"still want to (?:pass|skip|drop)", r"(?:you|u) sure\?", r"keep (?:it|them|that|this) in (?:the running|mind)", r"still in the running",
    r"still worth it", r"still want (?:it|them|this|that)\?", r"think (?:again|twice)", r"reconsider", r"sure (?:you|u) want to (?:skip|pass|drop)",
    r"(?:still )?think about (?:it|them|that)", r"(?:don'?t|not) rule (?:it|them|that) out", r"(?:you )?keep (?:it|them|that)\?",
    r"give (?:it|them|that) (?:another|a second) (?:chance|go|look)",
)
PROPOSE = re.compile(PROPOSE.pattern + "|" + RECONSIDER.pattern)
# Said right after a product or a label, what refuses it: "burgundy isn't my colour", "the chime
# would drive me crazy", "pepperoni's a no" (a turn-down; the label is avoided).
REFUSED = _words(
    r"(?:is|are|'s|'re)(?:n'?t| not) (?:really |quite )?(?:my|our|for me|for us)\b",
    r"(?:would|will|'d|'ll) drive me (?:crazy|nuts|mad)", r"(?:is|are|'s|'re) (?:a no|a dealbreaker|out)\b(?! of| there| here)",
    # "glass doors, I think is not necessary": not wanted
    r"(?:i think |i guess )?(?:it )?(?:is|are|'s|'re)(?:n'?t| not) (?:really )?(?:necessary|needed)",
)
# Contexts in which a named product is NOT proposed (a past rejection, a contrast, a warning).
NOT_PROPOSED = _words(
    r"already (?:turned|ruled|said|rejected|passed|looked|declined|saw|seen|checked)", r"turned (?:it |that |this )?down",
    r"ruled (?:it |that )?out", r"rejected", r"declined", r"did(?:n'?t| not) (?:like|want|work|suit|fit)",
    r"(?:do|did) you mean", r"instead of", r"rather than", r"unlike", r"skip(?:ping)?", r"(?:over|above|beyond|exceeds?) your (?:budget|limit)",
    r"too (?:expensive|pricey|costly)", r"does(?:n'?t| not) (?:have|fit|suit|match|meet|come)", r"out of (?:stock|range)",
    r"no longer", r"won'?t (?:work|fit|suit)", r"sold out", r"(?<!why )not (?:the|that|a good|right|suitable|ideal)", r"set (?:it |that |this |them |the [\w' -]{1,40}?)?aside",
    r"already in your (?:cart|basket)", r"off the list", r"it'?s out", r"wouldn'?t (?:go|pick|choose|recommend|suggest)", r"well over",
    r"put (?:it|that|the \w+) back", r"you (?:passed|said no)", r"steer clear", r"avoid", r"contains?",
    r"forget(?:ting)?", r"scratch(?:ing)?", r"drop(?:ping)?(?![^.?!]{0,50}\b(?:in|into) (?:the|your) (?:cart|basket|trolley))",
    r"over budget", r"so nope", r"left (?:it|them|that) out",  # ruled out in passing
    r"compared? (?:with|to)",  # "compared with the A, the B suits you better": A is weighed, not offered
)
# Said after a product, what rules it out: "dune + corsa r both over 400", "the alba is um over
# at 529.99", "the wren is 299.99, over ur 250", "rowan basket 32.99 but no lid" ("that one's
# over ur 15, softwood is 11.79" rules out the one before, not the softwood).
OVER_LIMIT = _words(r"(?:is|are|r|'s|'re)\s+(?:(?!just\b|slightly\b|right\b)[\w$.,]+\s+){0,2}?over\b(?! (?:here|there|by|on|at the|to|in)\b)",
                    r"but no [a-z]+")
# "vs the A (pricier): the B better": the side after a clause-opening "vs" is the one weighed against.
NOT_PROPOSED = re.compile(NOT_PROPOSED.pattern + "|" + REFUSED.pattern + r"|^\W*(?:vs\.?|versus)\s")
COMPARE = _words(
    r"than", r"compared?", r"comparison", r"versus", r"vs", r"whereas", r"while the", r"both", r"difference",
    r"differ", r"on the other hand", r"cheaper", r"pricier", r"more expensive", r"less expensive", r"same price",
    r"either", r"between the", r"by contrast", r"in contrast", r"side by side",
    r"instead of", r"same [\w.$ ]{0,24}?as\b", r"unlike", r"basically the",
)
PURCHASE = _words(
    r"add (?:it|this|that|them|one|the [\w' -]{1,60}?)? ?(?:to|into) (?:your|the) (?:cart|basket|trolley)",
    r"put (?:it|this|that|one|them|the [\w' -]{1,60}?) (?:in|into) (?:your|the) (?:cart|basket|trolley)",
    r"(?:in|into|to) (?:your|the|ur) (?:cart|basket|trolley)", r"ready to (?:buy|check ?out|take|purchase|grab|get)",
    r"(?:want to|wanna) (?:buy|take|get|grab|purchase) (?:it|this|that|one|them)", r"shall (?:we|i) (?:add|ring|put|get|grab|take)",
    r"should (?:we|i) (?:add|ring|put)\b", r"^\W*adding (?:the|this|that|these|those|it|them)\b",
    r"go ahead and (?:add|take|grab|buy|get)", r"would you like to (?:buy|take|get|purchase|add) (?:it|this|that|one|them|the)\b",
    r"take it home", r"ring (?:it|that|this) up", r"ring up (?:the|it|this|that)\b", r"(?:buy|purchase) (?:it|this|that|them)\b", r"is it a yes",
    r"add (?:it|this|that|them|one|the [\w' &-]{1,60}?)? ?to cart", r"cart (?:it|them|this|time)", r"(?:\u2192|->) ?cart", r"^cart\??$", r"\bcart\?$",
    r"shall we go with", r"(?<!still )want (?:it|this one|that one)\?", r"(?:taking|take) (?:it|this one|that one)\?",
    r"ready to (?:add|go)", r"check ?out", r"\badd (?:it|them|these|this|that|those)\b", r"your purchase", r"go ahead with",
    r"go on and add", r"(?:^|, |\. )buy (?:the|it|this|that|these)",
    # informal and non-native: "you want add the X in cart now?", "you want buying it?", "we doing it?"
    r"(?:you|u) want (?:to )?(?:add|adding|buy|buying|take|taking|purchase|purchasing)\b[^.?!]{0,60}\?",
    r"(?:are )?we doing (?:it|this|that)\?", r"(?:->|\u2192) ?(?:buy|add)\b",
    # the assistant adding it: "I add for you, yes?", "I'll put them in for you"
    r"\b(?:i|we) (?:can |could |will |'ll )?(?:add|put|ring up) (?:it |them |this |that |one )?(?:in )?for (?:you|u)\b",
    # "add green beans (6.89)? y/n": a question that opens with "add"
    r"^\W*add\b(?:[^.?!]|\.(?=\d)){1,60}\?\s*(?:y/n|yes or no)?\W*$",
)
# Clipped notes ask for the purchase without a verb: "cart?", "-> cart", "ready for cart".
PURCHASE = re.compile(
    PURCHASE.pattern + r"|\bcart\s*\?|(?:->|\u2192)\s*(?:(?:ur|your|the)\s+)?cart\b|\bready for (?:the |your )?cart\b"
    r"|\bfor (?:your|ur|the) (?:cart|basket|trolley)\b"  # "so that's the ivo candelabra for your cart yeah"
    r"|\bput (?:it |them )?in (?:the |your )?cart\b"
    # any words between the verb and the cart: "put this sunflower seed butter inside the cart"
    # ("add the **Quill Office Chair** by Quill and Co ($259.99) to your cart": a price's point is no sentence end)
    r"|\b(?:put|add|drop|throw|toss|pop)\b(?:[^.?!]|\.(?=\d)){0,80}?\b(?:in|into|inside|to)\s+(?:your |the |ur )?(?:cart|basket|trolley)\b"
)
# Navigation.
MOTION = frozenset(
    "go head walk move step turn come enter leave exit continue proceed follow cross pass look glance tilt "
    "face stroll wander swing pivot rotate return back get make keep spin hop pop duck swing slide shuffle scoot "
    "sidestep edge inch shift bounce cruise zip dash nip mosey amble saunter trot stride".split()
)
RELATION: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("out_of", _words(r"out of", r"leave", r"leaving", r"exit", r"exiting", r"step out", r"back out", r"get out", r"outside of", r"head out", r"out from", r"outside from", r"go out", r"come out", r"step outside", r"outta", r"out the door", r"(?:go|walk|head|step|get) outside(?! of)")),
    # (not "once you're inside": where a thing is after the walk)
    ("into", _words(r"into(?! (?:view|sight)\b)(?! the (?:corridor|hall|hallway|aisle|walkway)\b)", r"(?<!you're )(?<!you are )(?<!u r )(?<!ur )inside", r"enter", r"entering", r"go in", r"walk in", r"step in", r"head in", r"in through", r"pop in", r"duck in", r"(?:go|head|walk|step|come) on in\b")),
    ("past", _words(r"past", r"beyond", r"go by", r"walk by", r"pass(?:ing)?")),
    ("along", _words(r"(?<!freezers )(?<!coolers )(?<!shelves )(?<!freezer )(?<!cooler )along(?! the (?:back|front|left|right|far|side) wall)", r"down the length", r"further down", r"further along", r"down the aisle", r"down the shelf", r"sideways",
                     r"side-?step", r"shuffle", r"slide", r"scoot", r"inch (?:forward|along|over|closer|ahead|left|right|up|back)", r"edge (?:over|along|left|right)", r"that stretch")),
    ("behind", _words(r"behind(?! (?:of )?(?:you|u|ya)\b)", r"(?<!your )(?<!ur )back side", r"other side", r"rear(?! of the (?:shop|store)\b)(?! wall\b)", r"around the back", r"far side of the",
                      # the back of a fixture, not of the store: "look on its back", "to the back of it",
                      # "round to the back of s12", "round to s6's back", "round its end"
                      r"(?:to|on|at|round|around) its back", r"(?:the )?back of (?:it|them)", r"flip side",
                      r"(?:a)?round (?:to )?(?:the )?back of (?!the (?:shop|store)\b)", r"(?:a)?round to [a-z0-9 ]{1,16}'s back",
                      r"to the far side of", r"(?:a)?round [a-z0-9 ]{1,16} to the (?:far|other) side",
                      r"(?:a)?round (?:its|the) end\b",
                      # the fixture's other face: "the reverse of this shelf", "shelf 2's far face"
                      r"(?:the|its|on the) reverse\b", r"reverse (?:face|side)", r"(?:far|back|rear|other) face")),
    ("toward", _words(r"toward", r"towards", r"in (?:the )?direction of", r"head(?:ing)? for", r"(?<!be )(?<!you're )(?<!you are )facing(?! (?:you|u)\b)")),
)
DIRECTION: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("around", _words(r"(?:turn|swing|spin|whip) (?:all the way )?(?:a)?round", r"about[- ]face", r"behind you", r"spin (?:a)?round", r"turn back", r"180")),
    ("up", _words(r"look up", r"glance up", r"tilt (?:your (?:head|view) )?up", r"upward", r"top shelf", r"upper shel\w*", r"higher shel\w*", r"up high")),
    ("down", _words(r"look down", r"glance down", r"tilt (?:your (?:head|view) )?down", r"downward", r"bottom shel\w*", r"lower shel\w*", r"down low")),
    # (clipped "L" / "R" after a move or an arrow: "step L", "out of here -> L", "on ur R"; a bare
    # "r" is also "are")
    ("left", _words(r"left", r"(?:turn|go|step|hang an?|head|bear|on (?:ur|your|the)|->|\u2192)\s*l")),
    ("right", _words(r"(?:turn|go|step|hang an?|head|bear|on (?:ur|your|the)|->|\u2192)\s*r", r"(?:turn|veer|bear|hang a) right", r"(?<!get it )(?<!got it )right(?!\s+(?:now|there|here|away|straight|ahead|choice|one|fit|for|after|next|by|beside|behind|in|at|on|up|outside|inside|across|opposite|before|where|beyond|aisle|shelf|shop|store|section|place|spot|product|item|size|thing|way to|department|area))(?!,? i\b)")),
    ("back", _words(r"back up", r"steps?(?: or two)? back", r"backwards?", r"go back", r"(?<!the )(?<!its )reverse(?! (?:face|side|of)\b)", r"walk back", r"move back", r"take a step back",
                    r"(?:go|step|move|walk)\w*\s+(?:(?:a|little|bit|tiny|touch|tad|just)\s+){1,4}back")),  # "go little bit back"
    # ("keep going" / "keep walking" go on the way the shopper is headed: no new direction)
    ("ahead", _words(r"straight", r"ahead(?! and\b)", r"forwards?", r"fwd", r"onward")),
)
DISTANCE: tuple[tuple[str, re.Pattern[str]], ...] = (  # the first that matches holds
    # a bit beyond what is in sight: "it's a bit further on", "it is more far"
    ("medium", _words(r"(?:a )?(?:bit|little|lil) further", r"more far", r"further (?:on|down|along)", r"a (?:little|lil) ways?",
                      r"not (?:too |that |very |so )?far")),  # "is not far from here"
    ("short", _words(r"an? (?:step|pace|few steps|couple of steps|little|bit|sec)", r"(?:\d|one|two|three|four|five) (?:more )?(?:small |little |big )?steps?", r"few steps",
                     r"some steps", r"step or two",
                     r"couple (?:of )?steps", r"slightly", r"short", r"just a (?:bit|little|touch)", r"a (?:metre|meter|yard) or two",
                     r"(?:few|couple of|one|two) (?:metres|meters|feet|yards)", r"nudge", r"tiny bit", r"a touch",
                     # "step back little bit", "step back a lil"; just over the way
                     r"(?:step|move|go|come) back (?:a )?(?:little|lil|bit)", r"little bit", r"a lil\b", r"super close", r"very close", r"very near",
                     r"(?:is|'s|it is|pretty|quite|real|really) (?:close|near)(?=\s*(?:[.,!;?]|$|by\b|from\b))",  # "Is close.", not "near the door"
                     # the place faces the shopper or is the next one over: "right across the hall",
                     # "just over the corridor", "right across from u", "the next shelf over", "right
                     # beside this one" (not across from another place: "across the corridor from X")
                     r"(?:(?:right|just|straight|directly) (?:across|over)|cross|across) the (?:corridor|hall|hallway|way)(?! from (?!here\b|you\b|u\b))",
                     r"one (?:shelf|aisle|freezer|cooler|stand|door|shop) over", r"side-?step",
                     r"(?:right|just) across from (?:you|u|here)", r"right next door", r"next (?:shelf|aisle|freezer|cooler|stand|door) (?:over|along)",
                     r"right beside (?:this|you|u)\b", r"step over to",
                     # round the end of the fixture to its other face (20 lines against 4)
                     r"(?:a)?round (?:the|its|that|this) end\b(?! of the (?:corridor|hall|hallway|store|shop|row))")),
    ("long", _words(r"al+ the way", r"(?:until|till|til) (?:you|u) (?:reach|hit|get to) the (?:back|far|end)", r"far end", r"long way",
                    r"far(?! side| face)", r"back of the store", r"across the (?:store|floor)", r"to the end", r"(?:until|till|til) the end",
                    r"lo+ng walk", r"walk long",
                    # the walk ends where the store or the row does: "until the store ends", "till the
                    # store runs out", "right down the end", "wayyy down"
                    r"(?:until|till|til) the (?:store|shop|aisle|corridor|hall|row) (?:ends|runs out)",
                    r"(?:right |all the way |wa+y )?down (?:at )?the end", r"wa{2,}y+ (?:down|over|back)", r"bit of a (?:walk|trek|hike)", r"quite a (?:walk|trek|hike)", r"the whole (?:store|shop)", r"farthest", r"furthest", r"way (?:down|over|back) there", r"(?:to|till|until|at) the very end")),
)
NEGATION = _words(
    r"no", r"not", r"without", r"avoid\w*", r"don'?t", r"doesn'?t", r"never", r"nothing", r"hate", r"allergic",
    r"can'?t", r"cannot", r"free of", r"stay away", r"rather not", r"dislike", r"skip", r"none", r"anything but",
    r"no more", r"steer clear", r"isn'?t", r"aren'?t", r"won'?t",
)
BUDGET_BOUND = (
    ("max", _words(r"under", r"below", r"at most", r"up to", r"max\w*", r"no more than", r"less than", r"not more than",
                   r"or less", r"tops", r"limit", r"ceiling", r"cap", r"within", r"over", r"more than", r"exceed", r"budget",
                   r"spend", r"afford", r"go above", r"go over")),
    ("about", _words(r"around", r"about", r"roughly", r"approximately", r"ish", r"somewhere")),
)
# How a complaint is said of a product, and how strongly: "seems kind of", "looks a bit".
_SAID_OF = r"(?:is|'s|are|'re|r|seems?|feels?|looks?)"  # ("r": clipped "are", "zz plants r boring")
_DEGREE = r"(?:really|so|kind of|kinda|a bit|a little|pretty|way|quite|rather)"
# A price said back with the thing it buys: "129.99 for a lamp", "23 bucks for shrimp".
PRICE_FOR_THING = r"\$?\d[\d.,]*(?: bucks| dollars)? for (?:(?:a|an|one|the|that|this) )?[a-z ]{1,30}"
REJECT = _words(
    r"no thanks", r"no thank you", r"not for me", r"i'?ll pass", r"pass on", r"don'?t (?:really |quite )?(?:like|want|love|think)",
    r"does(?:n'?t| not) (?:quite |really |exactly )?(?:work|fit|suit|have|appeal|do it)", r"isn'?t (?:what|right|quite|really|for)",
    r"not (?:quite|really|what|right|sure about|for)", r"not the (?:kind|sort|type) of",
    # "too" before any quality: "too bitter for me", "too many rolls", "too old-fashioned" (not "not too bad")
    r"(?<!not )(?<!n't )too (?!late\b|early\b|soon\b)[a-z][a-z-]*", r"over my (?:budget|limit)", r"above my (?:budget|limit)",
    r"more than i (?:want|wanted|wanna|can|'?d like)", r"not sure (?:i|we) (?:need|want|like)", r"can'?t (?:take|have|use|do)", r"rather not", r"not interested", r"^no(?=[,.!;]|$| thanks| thank| way)", r"nope",
    r"(?:prefer|want|like|rather have|need) something else", r"won'?t work", r"not a fit",
    r"put (?:it|that|this|the [\w' -]{1,60}?) back", r"not (?:the|that) one", r"not keen", r"no good", r"i'?d rather", r"missing",
    r"lacks?", r"a no for me", r"ruled (?:it |that |this |them )?out", r"already (?:looked at|tried|checked)",
    # a product without what the shopper needs: "the X don't have ...", "the X isn't organic, and I need that"
    r"(?<!\bi )(?<!\bwe )(?<!\byou )do(?:n'?t| not) have",
    # a complaint about the product: "53 bucks for a mat is a lot", "quinoa's expensive", "it's
    # smaller than I imagined"
    # ... and of its size or look, with a degree word ("it looks kind of small"; "it's small" is a fact)
    rf"{_SAID_OF} (?:like )?(?:a lot|(?:{_DEGREE} )?(?:expensive|pricey|pricy|steep|wasteful))\b",
    rf"{_SAID_OF} {_DEGREE} (?:small|tiny|big|huge|tall|short|large|heavy|bulky|narrow|wide|dark|bright|plain|thin|flimsy|"
    r"cheap|cheap-looking|loud)\b(?! to\b)",
    r"(?:smaller|bigger|larger|heavier|darker|lighter|louder) than i (?:imagined|thought|expected|wanted|hoped)",
    r"(?:(?:is|are|'s|'re) not|isn'?t|aren'?t) (?:big |large )?enough",  # "half gallon is not enough"
    r"(?:won'?t|will not|wouldn'?t) be (?:big |large )?enough",
    # a price said back in disbelief: "129.99 for a lamp??", or as all there is to say: "sixty
    # bucks for blocks", "699.99?? steep"
    PRICE_FOR_THING + r"(?:\?\?|\?!|!\?)",
    r"^\W*(?:\$?\d[\d.,]*|(?:[a-z]+ ){0,2}[a-z]+ (?:bucks|dollars|quid))(?: bucks| dollars)? for (?:(?:a|an|one|the|that|this|some) )?[a-z]+(?: [a-z]+)?[.!]*\s*$",
    r"(?:^|[\d?!.,]\s*)(?:so |kinda |pretty |way )?(?:steep|pricey|pricy|spendy)\W*$",
    # a size said of the thing in hand, bare: "This can is small.", "these bags look huge"
    r"^\W*(?:this|that|these|those) (?:[a-z]+ )?(?:is|are|'s|looks?|seems?|feels?) (?:small|tiny|big|huge|bulky|heavy|thin)\W*$",
    r"over what (?:i|we) (?:want|wanted|'d like|would like|can|planned) to (?:spend|pay)",
    r"(?:isn'?t|aren'?t|is not|are not)\b[^.?!]{0,40}\b(?:and|but) (?:i|we) (?:really )?(?:need|want|wanted|must have)",
)
# A complaint that needs no degree word: a quality no one wants said of the product or its
# label ("paper feels flimsy", "brass looks old-fashioned", "Leather's hard to keep clean with
# kids", "Cream will show every stain"), or a dislike ("I hate raisins").
_SAID_AS = rf"(?:{_SAID_OF}|sounds?|'d be|would be|will be|gonna be)"
COMPLAINT = _words(
    rf"{_SAID_AS} (?:like )?(?:{_DEGREE} )?(?:flimsy|boring|weird|odd|strange|old[- ]fashioned|dated|ugly|tacky|dull|"
    r"bland|gross|fussy|scratchy|itchy|stiff|wobbly|fragile|uncomfortable|impractical|off-putting|a bit much|a pain)\b",
    # (of keeping or using it: "hard to kill" is praise)
    rf"{_SAID_AS} (?:{_DEGREE} )?(?:hard|difficult|tricky|a pain) to (?:keep|clean|care|take care|look after|maintain|move|"
    r"assemble|put together|use|carry|fit|store|water|wash)\b",
    r"(?:will|would|'ll|'d) show (?:every|all the|each) (?:stain|mark|scratch|hair|crumb)",
    r"i (?:really )?(?:hate|can'?t stand|dislike|detest)",
)
REJECT = re.compile(REJECT.pattern + "|" + REFUSED.pattern + "|" + COMPLAINT.pattern)
# Negative words that turn nothing down: a limit on what the shopper spends, a wish to avoid a
# label or to browse alone ("I don't want to spend more than $25", "I'd rather avoid nuts",
# "I don't want it dairy-free", "I'd rather look around on my own").
NOT_A_REJECTION = _words(
    r"(?<!\bbut i )(?:don'?t|do not) want to (?:spend|pay|go (?:over|above|beyond|past)|exceed)",  # "X is $9, but I don't ..." declines
    r"(?:want to|would like to|'?d like to|'?d rather|rather|need to|have to|trying to) (?:avoid|stay away|steer clear|skip)\w*",
    r"(?:don'?t|do not) want (?:it|them|anything|something)(?= [a-z])(?! (?:at all|anymore|any more|thanks|after all)\b)",
    r"i'?d rather (?:look|browse|explore|take my|go|walk|find|keep|head|check|see|wander|decide)",
    r"(?:don'?t|do not) (?:like|love|eat|drink)(?= [a-z])(?! (?:it|that|this|them|these|those|the|one|any of)\b)",
    # "no" answering a question about the shopper's wishes: "No, nothing to avoid."
    r"^no\b[,.!]?\s*(?=nothing (?:to|i|we|in particular|special|else)\b|no particular\b|none\b)",
)
# A doubt voiced as a question about an offer is a hesitation, not a turn-down: "the X doesn't
# have it. Is it still a good choice?", "$8.49 is more than I wanted. Why should I go for it?"
HESITATION = _words(
    r"still (?:work|be|a good|good|ok|okay|worth|suit|fine|right)", r"(?:is it|it'?s|is that) (?:really |still )?worth",
    r"why should i (?:go for|get|buy|pick|take|choose)", r"would it still", r"worth it anyway",
)
ACCEPT = _words(
    r"i'?ll take", r"i'?ll get", r"i'?ll buy", r"i'?ll have", r"sounds (?:good|great|perfect|right)", r"that works",
    r"works for me", r"i'?ll add", r"adding", r"let'?s go with", r"great choice", r"love it", r"i like (?:it|this|that)",
    r"that'?s (?:the one|perfect|great|it)", r"yes,? please", r"it'?s what i need", r"that'?s what i need",
)
REQUESTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("explain", _words(r"why", r"what makes", r"how come", r"reasons?", r"tell me more", r"explain", r"convince", r"good fit for me", r"suit me",
                       r"what'?s (?:so )?(?:special|good|great|nice) about", r"what do (?:you|u) like about")),
    ("compare", _words(r"compare", r"comparison", r"difference", r"versus", r"vs", r"better than", r"which (?:one )?is better", r"how do(?:es)? .{0,40} compare")),
    ("alternatives", _words(r"anything else", r"something else", r"other options?", r"another", r"alternatives?", r"what else", r"else (?:would|could)", r"instead\?")),
    ("location", _words(r"where", r"can'?t see", r"cannot see", r"don'?t see", r"can'?t find", r"lost", r"which way", r"how do i get")),
    ("directions", _words(r"which way", r"where should i go", r"where to", r"blocked", r"in my way", r"can'?t get through")),
)
CLAIMS = _words(
    r"on sale", r"sale price", r"discount\w*", r"\d+\s?% off", r"half[- ]price", r"promo\w*", r"deal of", r"special offer",
    r"best[- ]?sell\w*", r"most popular", r"popular", r"award[- ]?\w*", r"top[- ]rated", r"highly rated", r"\d(?:\.\d)? stars?",
    r"five[- ]star", r"reviews?", r"in stock", r"limited (?:stock|time|edition)", r"selling fast", r"customers? (?:love|rave|swear)",
    r"fan favou?rite", r"clearance", r"bogo", r"buy one,? get", r"best price", r"lowest price", r"price match", r"bargain",
    r"flying off", r"everyone loves", r"people love", r"number one", r"#1", r"gold medal", r"certified best", r"guarantee\w*",
)

# A reason tied to the shopper (Explain), as opposed to a bare fact (AnswerQuestion).
REASON = _words(
    r"because", r"since", r"so (?:it|you|they|it'?s|that|your|there|no|not|doors|it'll)", r", so", r"which means", r"thanks to",
    r"that'?s why", r"that means", r"meaning", r"due to", r"reason", r"(?:picked|chose|showed|suggested|recommended|pointed) (?:you |it |this |these |that |them )?(?:for|because|as|out)",
    r"i (?:picked|chose)", r"(?:ideal|great|good|perfect|nice|handy|fine|safe|best) (?:for|with) (?:you|your)", r"for your", r"fits? your",
    r"suits? your", r"matches your", r"meets? your", r"budget", r"your limit", r"under the \$", r"you'?ll", r"you won'?t", r"you can",
    r"easy to", r"as it", r"as they", r"which matters", r"you (?:asked|mentioned|wanted|said|like|need)", r"isn'?t a problem",
    r"no problem for", r"won'?t (?:bother|be a problem)", r"worth it", r"keeps? you", r"so not", r"good fit",
)
COMPARATIVE = re.compile(
    r"\b(?:[a-z]+er than|cheaper|pricier|sweeter|healthier|bigger|smaller|larger|lighter|heavier|softer|firmer|better|worse|"
    r"quieter|sturdier|longer|shorter|taller|wider|narrower|stronger|milder|darker|richer|creamier|crunchier|tarter|"
    # ("two" the options, not a place's number or a count of steps: "chest freezer two", "two steps")
    r"more expensive|less expensive|more|less|both|(?<!shelf )(?<!freezer )(?<!cooler )(?<!stand )two(?! steps?\b| feet\b)|"
    r"per bar|per roll|the same|whereas|while the|of the two|between)\b"
)
# A turn that takes a rejection on board ("you already turned that down", "let's skip it").
HANDLE_REJECTION = _words(
    r"no problem", r"no worries", r"understood", r"fair enough", r"i understand", r"(?:that'?s|that is) (?:fine|okay|ok|alright|totally fine)",
    r"sorry (?:that|it|to hear|about|the|i)", r"i'?m sorry", r"noted", r"totally (?:fair|understand)", r"makes sense",
    r"already (?:turned|ruled|said no|rejected|passed)", r"turned (?:it |that |this )?down", r"passed on", r"won'?t (?:suggest|bring|push|show|mention)",
    r"let'?s (?:skip|leave|forget|drop|move on|look elsewhere|try (?:something|another|a different))", r"we'?ll (?:skip|leave|forget|drop)",
    r"skip (?:it|that|this|those|them)", r"leave (?:it|that|the [\w' -]{1,40}?) (?:on the shelf|there|then|behind)", r"not what you had in mind",
    r"i get it", r"^you'?re right", r"stop pushing", r"too high", r"fine,? we'?ll", r"off the list", r"i hear you", r"my apologies",
    r"good to know", r"fair point", r"shame", r"not (?:for|right for) you", r"(?:didn'?t|doesn'?t) (?:work|suit) (?:for )?you",
    r"(?:alright|okay|ok|got it),? no [a-z]+", r"no [a-z ]{1,20} then", r"thanks for telling me",
    # setting the turned-down product aside, in any verb form: "dropping the lamb", "we forget that one"
    r"(?:drop|dropping|skip|skipping|forget|forgetting|scratch|scratching|remove|removing|take away|taking away|"
    r"cross off|crossing off) (?:it|that|this|those|them|the)\b", r"off the table", r"no-?go", r"(?:that|this) one'?s out",
    r"(?:won'?t|will not|i'?ll not) (?:show|suggest|propose|recommend|offer|bring up|push)", r"steer clear of",
    # the turned-down one struck off in any register: "ok honey one out", "gotcha, isla's out",
    # "Okay, not the spicy one", "oh okay so not the isla then", "fair, but ..."
    r"(?:'s|is|are) out(?! of| there| here| front| back)", r"(?:ok|okay|fair|sure|gotcha|got it|alright|right|understood)\b[^.?!]{0,40}\bout(?=\W*(?:$|[.!;,]))",
    r"(?:ok|okay|alright|sure|got it|gotcha|sorry|fine)\W+(?:so |then )?not the", r"^\W*fair\b", r"i get that",
    r"no more [a-z]+ (?:suggestions|picks|options|recommendations|ideas)", r"not (?:good|a good fit) for you",
)

# Read in the assistant's response by the RecRM gates and the rule-based dialogue judge.
# SoM marker labels as the assistant sees them: [a], [ab], [3], [2a]; or "label b", "marker 3".
MARKER_LABEL = re.compile(
    r"\[\s*(?:[a-z]{1,2}|\d{1,2}[a-z]?)\s*\]|\b(?:label|marker|mark|tag)\s+['\"]?(?:[a-z]{1,2}|\d{1,2}[a-z]?)['\"]?(?=[\s.,!?;:)]|$)",
    re.IGNORECASE,
)
# Field names of the assistant's structured output, which the shopper must never hear.
_OUTPUT_FIELDS = r"json|ranking|expected_user_action|assistant_actions|navigation_goal|visible_now|display_name"
# Words of the system's internals that the user must never hear.
INTERNAL_JARGON = re.compile(
    rf"\b(?:{_OUTPUT_FIELDS})\b|\bentity[ _-]?ids?\b|\b(?:product|item|fixture)[ _-]ids?\b|"
    r"\bhandles?\s+(?:\[|[a-z]{1,2}\b|\d)|\bset[- ]of[- ]marks?\b|\bsom\b",
    re.IGNORECASE,
)
# A claim about the shopper's own wishes ("since you said you love organic ...").
ABOUT_THE_SHOPPER = re.compile(
    r"\byou(?:'ve| have)? (?:said|mentioned|told me|asked for|wanted|want|like|love|prefer|need|were after|are after|hate|avoid)\b"
    r"|\byour (?:love|preference|wish|request) (?:of|for)\b",
    re.IGNORECASE,
)
# Catalog ids such as sm_p012 / hf_p104 / sm_f03.
CATALOG_ID = re.compile(r"\b[a-z]{2,3}_[a-z]{1,2}\d{2,4}\b", re.IGNORECASE)
# What the rule judge counts against naturalness: the gate's output fields and ids, plus any
# handle in brackets, braces, the bare words "handle"/"entity id" and snake_case words.
JUDGE_JARGON = re.compile(
    rf"{CATALOG_ID.pattern}|\[[0-9a-z]{{1,3}}\]|[{{}}]|\b(?:{_OUTPUT_FIELDS}|handle|entity id)\b|\b[a-z]+_[a-z_]+\b",
    re.IGNORECASE,
)

# Read by the factual-consistency judge: claims about the cart, the hand and the budget.
CLAIM_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
CLAIM_PRICE = re.compile(r"\$\s?(\d{1,6}(?:,\d{3})*(?:\.\d{1,2})?)")
BUDGET_WORDS = frozenset(
    "budget under below less within limit spend spending max maximum cap afford upto than".split()
)
REFERRING_PRONOUNS = frozenset("it its it's this these they them one".split())
PREFERENCE_WORDS = frozenset(
    "want wanted need needed looking prefer avoid asked mentioned said".split()
)
PLACE_PREPOSITIONS = frozenset("in at on inside from".split())
CART_CLAIM = re.compile(
    r"\balready\b.*\b(?:cart|basket)\b|"
    r"\b(?:is|are|'s|got|have|has)\s+(?:already\s+)?(?:in|inside)\s+(?:your|the)\s+(?:cart|basket)\b|"
    # "you've put it in your cart" claims; "(if you like it,) you put it in your cart" instructs
    r"\byou(?:'ve|\s+have|\s+already|\s+just)\s+(?:already\s+|just\s+)?(?:added|put|placed)\b.*\b(?:cart|basket)\b|"
    r"\byou\s+(?:added|placed)\b.*\b(?:cart|basket)\b",
    re.IGNORECASE,
)
HAND_CLAIM = re.compile(
    r"\byou(?:'re|\s+are)\s+(?:now\s+|already\s+)?holding\b|\bin\s+your\s+hands?\b|"
    r"\byou(?:'ve|\s+have)?\s+(?:already\s+|just\s+)?picked\s+up\b|\bthe\s+one\s+you(?:'re|\s+are)\s+holding\b",
    re.IGNORECASE,
)
BUDGET_CLAIM = re.compile(
    r"\byour\s+(?:budget|limit|price\s+limit)\b[^.$!?]{0,40}?\$\s?(\d{1,6}(?:\.\d{1,2})?)|"
    r"\$\s?(\d{1,6}(?:\.\d{1,2})?)\s+(?:budget|limit)\b[^.!?]{0,20}\byou\b"
    r"|\byour\s+\$\s?(\d{1,6}(?:\.\d{1,2})?)\s+(?:budget|limit|price\s+limit)\b"
    # the same in words: "in your 160 dollars budget", "your budget of 160 dollars"
    r"|\byour\s+(\d{1,6}(?:\.\d{1,2})?)[\s-]*(?:dollars?|bucks|usd)\s+(?:budget|limit|price\s+limit)\b"
    r"|\byour\s+(?:budget|limit)\s+(?:of|is|was)\s+(\d{1,6}(?:\.\d{1,2})?)\s*(?:dollars?|bucks|usd)\b",
    re.IGNORECASE,
)
# Stock chatbot phrases the rule-based dialogue judge counts against naturalness.
STOCK_PHRASES = (
    "as an ai",
    "i am an ai",
    "i'm an ai",
    "let me help you with that",
    "how can i assist you",
    "i hope this helps",
    "feel free to",
    "is there anything else",
)
