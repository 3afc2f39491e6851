"""A Stellar Winds creature's ``defenses_now`` (its view's defenses against melee and ranged
attacks) computes each ranged value only when a condition can make it differ: the result is
the one computing both for every defense (``attacks.defense_of``), whatever the conditions,
life state, defense modifiers and stacking rule."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.rulesets.stellar_winds import _defenses_now, attacks
from domain.rulesets.stellar_winds.state import LIFE_CONDITIONS, new_creature
from domain.rulesets.stellar_winds.tables import CONDITIONS

DEFENSES = ("ac", "fort", "ref", "will")

components = st.one_of(
    st.fixed_dictionaries({"condition": st.sampled_from(sorted(CONDITIONS))}),
    st.fixed_dictionaries(
        {
            "defense_mod": st.fixed_dictionaries(
                {"value": st.integers(-3, 4), "defense": st.sampled_from([*DEFENSES, "all"])},
                optional={"type": st.sampled_from(["power", "item", "untyped"])},
            )
        }
    ),
)
effects = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["a", "b"]), "components": st.lists(components, max_size=3)},
        optional={"pending": st.booleans()},
    ),
    max_size=4,
)


def both_always(c: Any, flags: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for d in DEFENSES:
        value, parts = attacks.defense_of(c, d, "melee", flags=flags)
        ranged, _ = attacks.defense_of(c, d, "ranged", adjacent=False, flags=flags)
        out[d] = {"value": value, "against_ranged": ranged, "parts": parts}
    return out


@given(
    effects=effects,
    life=st.sampled_from(["alive", *LIFE_CONDITIONS]),
    stacking=st.sampled_from(["highest_per_type", "all"]),
)
def test_defenses_now_equal_both_defenses_computed_for_every_defense(
    effects: list[dict[str, Any]], life: str, stacking: str
) -> None:
    c = new_creature("x")
    c.defenses = {"ac": 17, "fort": 15, "ref": 14, "will": 13}
    c.life = life
    c.effects = effects
    flags = {"sw.bonus_stacking": stacking}
    assert _defenses_now(c, flags) == both_always(c, flags)


def test_a_prone_creature_is_harder_to_hit_from_afar() -> None:
    c = new_creature("x")
    c.defenses = {"ac": 17, "fort": 15, "ref": 14, "will": 13}
    c.life = "alive"
    c.effects = [{"name": "down", "components": [{"condition": "prone"}]}]
    now = _defenses_now(c, {})
    assert (now["ac"]["value"], now["ac"]["against_ranged"]) == (17, 19)
