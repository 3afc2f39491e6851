"""The fold's fast paths ask what the general forms ask (hypothesis: fast == general).

* Stellar Winds' attack path reads a creature's conditions through indexes of the conditions
  table (``tables.GRANTS_CA`` ...: a set intersection) instead of a loop over the conditions
  asking each one's ``Condition``; ``attack_made`` hands the conditions it read to
  ``_attack_parts`` and ``defense_of``, and ``damage.modify`` to ``resistance``.
* ``encounters.action_limit`` skips a creature none of whose conditions limits actions, and
  ranks limits by a dictionary; ``effects.apply`` asks an index whether a condition brings
  unconsciousness.
* ``Creature.conditions`` adds each condition with everything it brings (``state.IMPLIED``)
  instead of walking the implications; ``bonuses.stack`` returns an untyped breakdown as it is.
* The core engine's budget check (``_within_a_budget``) is ``any(all(...))`` written as loops.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.core.encounters import ActionTable, _within_a_budget
from domain.rulesets.stellar_winds import attacks, bonuses, effects, tables
from domain.rulesets.stellar_winds import encounters as sw_encounters
from domain.rulesets.stellar_winds.state import new_creature
from domain.rulesets.stellar_winds.tables import CONDITIONS

NAMES = st.sets(st.sampled_from([*CONDITIONS, "not-a-condition", "bluffed"]), max_size=6)
KINDS = st.sampled_from(attacks.KINDS)


@given(tconds=NAMES, aconds=NAMES, kind=KINDS)
def test_the_condition_indexes_ask_what_the_loops_over_the_conditions_ask(
    tconds: set[str], aconds: set[str], kind: str
) -> None:
    granting = sorted(
        c
        for c in tconds
        if CONDITIONS.get(c)
        and (CONDITIONS[c].grants_ca or (CONDITIONS[c].grants_ca_melee_only and kind == "melee"))
    )
    assert sorted(tconds & (tables.GRANTS_CA_MELEE if kind == "melee" else tables.GRANTS_CA)) == granting
    for names in (tconds, aconds):
        assert (not tables.UNSEEN.isdisjoint(names)) == any(
            CONDITIONS[c].unseen for c in names if c in CONDITIONS
        )
        assert (not tables.CANNOT_SEE.isdisjoint(names)) == any(
            CONDITIONS[c].cannot_see for c in names if c in CONDITIONS
        )
        assert (not tables.HALF_DAMAGE_DEALT.isdisjoint(names)) == any(
            CONDITIONS[n].half_damage_dealt for n in names if n in CONDITIONS
        )
        assert sorted(names & tables.HALF_DAMAGE_TAKEN) == sorted(
            n for n in names if n in CONDITIONS and CONDITIONS[n].half_damage_taken
        )
        assert [
            c for c in sorted(names & tables.ATTACK_PENALTY) if kind in CONDITIONS[c].attack_penalty_kinds
        ] == [
            c
            for c in sorted(names)
            if (spec := CONDITIONS.get(c)) and spec.attack_penalty and kind in spec.attack_penalty_kinds
        ]


def _creature(conditions: list[str]) -> Any:
    c = new_creature("t")
    c.name, c.life, c.defenses = "T", "active", {"ac": 15, "fort": 13, "ref": 14, "will": 12}
    c.effects = [
        {
            "effect_id": f"e{i}",
            "target": "t",
            "name": name,
            "components": [{"condition": name}],
            "duration": {"kind": "save_ends"},
        }
        for i, name in enumerate(conditions)
    ]
    return c


@given(
    names=st.lists(st.sampled_from(sorted(CONDITIONS)), max_size=4, unique=True),
    defense=st.sampled_from(["ac", "fort", "ref", "will"]),
    kind=KINDS,
    adjacent=st.none() | st.booleans(),
)
def test_a_defense_with_the_conditions_handed_in_is_the_defense_read_without_them(
    names: list[str], defense: str, kind: str, adjacent: bool | None
) -> None:
    target = _creature(names)
    general = attacks.defense_of(target, defense, kind, adjacent, {})
    assert attacks.defense_of(target, defense, kind, adjacent, {}, target.conditions()) == general


BUDGET = st.dictionaries(st.sampled_from(["standard", "move", "minor"]), st.integers(0, 2), max_size=3)


@given(
    budgets=st.lists(BUDGET, min_size=0, max_size=3),
    taken=BUDGET,
    extra=BUDGET,
    turn_bound=st.lists(st.sampled_from(["standard", "move", "minor"]), unique=True, max_size=3),
)
def test_the_budget_check_is_any_of_all(
    budgets: list[dict[str, int]], taken: dict[str, int], extra: dict[str, int], turn_bound: list[str]
) -> None:
    table = ActionTable(
        kinds=("standard", "move", "minor"), turn_bound=tuple(turn_bound), budgets=tuple(budgets)
    )
    general = any(
        all(taken.get(k, 0) <= s.get(k, 0) + extra.get(k, 0) for k in table.turn_bound) for s in table.budgets
    )
    assert _within_a_budget(taken, extra, table) == general


def _action_limit_by_the_list(c: Any) -> tuple[str, str | None]:
    """``action_limit`` as it was written first: every condition, ranked by ``list.index``."""
    conds = c.conditions()
    if not conds:
        return "all", None
    ranks = list(tables.ACTION_LIMITS)
    worst, why = "all", None
    for name in sorted(conds):
        spec = CONDITIONS.get(name)
        if spec and ranks.index(spec.actions) > ranks.index(worst):
            worst, why = spec.actions, name
    return worst, why


@given(
    names=st.lists(st.sampled_from(sorted(CONDITIONS)), max_size=4, unique=True),
    life=st.sampled_from(["active", "dying", "knocked_out", "stabilized", "dead"]),
)
def test_the_action_limit_is_the_strictest_as_the_loop_over_every_condition_finds(
    names: list[str], life: str
) -> None:
    c = _creature(names)
    c.life = life
    assert sw_encounters.action_limit(c) == _action_limit_by_the_list(c)


@given(name=st.none() | st.sampled_from([*CONDITIONS, "not-a-condition"]))
def test_the_unconscious_index_is_what_the_implications_bring(name: str | None) -> None:
    assert (name in effects.BRINGS_UNCONSCIOUS) == _brings(name, "unconscious")


def _brings(name: Any, wanted: str) -> bool:
    """Whether condition ``name`` is ``wanted`` or implies it, walked one implication at a time."""
    stack, seen = [name], set()
    while stack:
        n = stack.pop()
        if n == wanted:
            return True
        if n in seen or n not in CONDITIONS:
            continue
        seen.add(n)
        stack.extend(CONDITIONS[n].implies)
    return False


def _conditions_by_walking(c: Any) -> set[str]:
    """``Creature.conditions`` as it was written first: collect, then walk the implications."""
    found: set[str] = set()
    if not c.effects and c.life not in ("dying", "knocked_out", "stabilized"):
        return found
    if c.life in ("dying", "knocked_out", "stabilized"):
        found.add("dying" if c.life == "dying" else "unconscious")
    for eff in c.effects:
        if eff.get("pending"):
            continue
        for comp in eff["components"]:
            cond = comp.get("condition")
            if cond:
                found.add(cond)
    stack = list(found)
    while stack:
        spec = CONDITIONS.get(stack.pop())
        for implied in spec.implies if spec else ():
            if implied not in found:
                found.add(implied)
                stack.append(implied)
    return found


@given(
    names=st.lists(st.sampled_from([*sorted(CONDITIONS), "not-a-condition"]), max_size=5),
    pending=st.lists(st.booleans(), min_size=5, max_size=5),
    life=st.sampled_from(["active", "dying", "knocked_out", "stabilized", "dead"]),
)
def test_conditions_with_what_they_bring_are_the_walk_over_the_implications(
    names: list[str], pending: list[bool], life: str
) -> None:
    c = _creature(names)
    c.life = life
    for e, waiting in zip(c.effects, pending, strict=False):
        if waiting:
            e["pending"] = True
    assert c.conditions() == _conditions_by_walking(c)


PART = st.fixed_dictionaries(
    {"source": st.sampled_from(["a", "b", "c"]), "value": st.integers(-3, 5)},
    optional={"type": st.sampled_from([*bonuses.BONUS_TYPES, "untyped"])},
)


@given(parts=st.lists(PART, max_size=6))
def test_stacking_an_untyped_breakdown_is_the_general_stacking(parts: list[dict[str, Any]]) -> None:
    """With no typed part, the fast return gives what the general loop gives (and otherwise
    the general loop runs): compared with the breakdown stacked part by part from scratch."""
    stacked = bonuses.stack(parts, {})
    best: dict[str, int] = {}
    for i, p in enumerate(parts):
        kind = p.get("type")
        if isinstance(kind, str) and kind != "untyped" and p["value"] > 0:
            if kind not in best or p["value"] > parts[best[kind]]["value"]:
                best[kind] = i
    expected = [
        {**p, "value": 0, "does_not_stack": p["value"], "why": stacked[i].get("why")}
        if p.get("type") in best and best[p["type"]] != i and p["value"] > 0
        else p
        for i, p in enumerate(parts)
    ]
    assert stacked == expected
    assert stacked is not parts


@given(
    regeneration=st.integers(-2, 5),
    hp=st.integers(-3, 20),
    wounds=st.integers(0, 3),
    life=st.sampled_from(["active", "dying", "dead"]),
    at_0_hp=st.booleans(),
)
def test_a_creature_without_effects_regenerates_and_owes_as_the_general_forms_say(
    regeneration: int, hp: int, wounds: int, life: str, at_0_hp: bool
) -> None:
    """The early returns for a creature with no effect (every turn start and end asks):
    ``_regenerate`` reads the sheet's regeneration, ``components`` and ``begin_pending`` find
    nothing, as the general forms over an empty effect list do."""
    from domain.core import effects as core_effects

    c, general = new_creature("t"), new_creature("t")
    for x in (c, general):
        x.effects, x.regeneration, x.hp, x.max_hp, x.wounds, x.life = [], regeneration, hp, 20, wounds, life
    # an effect that is not in force yet: the general forms run, and find nothing
    general.effects = [{"effect_id": "e0", "pending": True, "components": [], "duration": {}}]
    assert sw_encounters._regenerate(c, at_0_hp) == sw_encounters._regenerate(general, at_0_hp)
    assert (c.hp, c.max_hp) == (general.hp, general.max_hp)
    assert core_effects.components(c, "ongoing") == [] == core_effects.components(general, "ongoing")
    assert core_effects.begin_pending(None, c) == []
    assert core_effects.highest_per_type(c, "ongoing") == {}


@given(values=st.lists(st.integers(-50, 50), max_size=8))
def test_totals_are_the_sums(values: list[int]) -> None:
    """``bonuses.total`` (a loop) is the sum of the parts' values."""
    assert bonuses.total([{"source": "x", "value": v} for v in values]) == sum(values)
