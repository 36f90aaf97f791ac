"""Generated IDs: the number a sandbox hands out first for each prefix (`BK-90001`).

Seeds and scenario families number their rows below it, so an ID a tool generates never collides with a
seeded one, and scoring can tell generated IDs apart from seeded ones.
"""

#: First number handed out for a prefix; seeds use lower numbers, so generated IDs never collide.
FIRST_GENERATED_ID = 90001
