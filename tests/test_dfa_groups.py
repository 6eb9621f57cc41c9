"""``dfa._class_groups`` against its plain definition: class ``k`` leads from ``reachable``
to the positions that accept it, and classes leading to the same positions form one group.
The one-cut path (every reachable position accepting the same classes) and the splitting
path are both met."""

import random

from fsmviz.automaton.dfa import _class_groups, set_bits


def _plain(reachable: int, position_classes: list[int], everything: int) -> dict[int, int]:
    """Group the classes by target, one class at a time."""
    by_target: dict[int, int] = {}
    for k in set_bits(everything):
        target = 0
        for p in set_bits(reachable):
            if position_classes[p] >> k & 1:
                target |= 1 << p
        by_target[target] = by_target.get(target, 0) | 1 << k
    return {classes: target for target, classes in by_target.items()}


def test_groups_are_the_plain_grouping_on_random_positions() -> None:
    rng = random.Random(48)
    alike = split = 0
    for _ in range(600):
        n_classes = rng.randint(1, 9)
        everything = (1 << n_classes) - 1
        kinds = [rng.randint(1, everything) for _ in range(rng.randint(1, 3))]
        position_classes = [rng.choice(kinds) for _ in range(rng.randint(1, 12))]
        reachable = rng.randint(1, (1 << len(position_classes)) - 1)
        groups = dict(_class_groups(reachable, position_classes, everything))
        assert groups == _plain(reachable, position_classes, everything)
        if len({position_classes[p] for p in set_bits(reachable)}) == 1:
            alike += 1
        else:
            split += 1
    assert alike > 100 and split > 100  # both paths were taken


def test_one_cut_keeps_the_classes_that_lead_nowhere() -> None:
    # positions 0 and 1 both accept classes {0, 2}; class 1 leads nowhere
    assert dict(_class_groups(0b11, [0b101, 0b101], 0b111)) == {0b101: 0b11, 0b010: 0}
    assert dict(_class_groups(0b11, [0b111, 0b111], 0b111)) == {0b111: 0b11}
