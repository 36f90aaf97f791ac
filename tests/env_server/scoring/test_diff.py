"""Unit tests of the diff core: content matching of added rows, column-level updates, volatile columns."""

from env_server.scoring.diff import changes, compare, without_columns
from env_server.scoring.snapshot import ChangedRows, Snapshot, generated_id_matcher, normalise


def snap(**tables: dict) -> Snapshot:
    return Snapshot(tables={name: dict(rows) for name, rows in tables.items()})


def changed_between(initial: Snapshot, final: Snapshot) -> ChangedRows:
    """What a change log would hold: every key whose row differs, with its final row (None if deleted)."""
    out: ChangedRows = {}
    for name, before in initial.tables.items():
        after = final.tables.get(name, {})
        keys = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        if keys:
            out[name] = {k: after.get(k) for k in keys}
    return out


def diff(initial: Snapshot, final: Snapshot, volatile: dict | None = None):  # type: ignore[no-untyped-def]
    return changes(initial, changed_between(initial, final), volatile or {})


INITIAL = snap(
    accounts={("A1",): {"id": "A1", "bal": 10, "note": "x"}, ("A2",): {"id": "A2", "bal": 0, "note": "y"}},
    transfers={},
)


def test_equal_changes_give_no_entries() -> None:
    final = snap(
        accounts={("A1",): {"id": "A1", "bal": 5, "note": "x"}, ("A2",): {"id": "A2", "bal": 5, "note": "y"}},
        transfers={("T-90001",): {"id": "<new:T>", "amt": 5}},
    )
    c = diff(INITIAL, final)
    assert compare(c, c) == []
    assert set(c) == {"accounts", "transfers"}


def test_added_rows_match_by_content_whatever_their_generated_keys() -> None:
    a = snap(
        accounts=INITIAL.tables["accounts"],
        transfers={("T-90001",): {"id": "<new:T>", "amt": 5}, ("T-90002",): {"id": "<new:T>", "amt": 7}},
    )
    b = snap(
        accounts=INITIAL.tables["accounts"],
        transfers={("T-90001",): {"id": "<new:T>", "amt": 7}, ("T-90002",): {"id": "<new:T>", "amt": 5}},
    )
    assert compare(diff(INITIAL, a), diff(INITIAL, b)) == []


def test_volatile_columns_are_ignored() -> None:
    final = snap(
        accounts={
            ("A1",): {"id": "A1", "bal": 10, "note": "changed"},
            ("A2",): INITIAL.tables["accounts"][("A2",)],
        },
        transfers={},
    )
    assert diff(INITIAL, final, {"accounts": frozenset({"note"})}) == {}
    assert diff(INITIAL, final) != {}


def test_a_row_inserted_then_deleted_is_no_change() -> None:
    assert changes(INITIAL, {"transfers": {("T-90001",): None}}, {}) == {}


def test_missing_wrong_extra_on_updates_and_deletes() -> None:
    expected = diff(
        INITIAL,
        snap(
            accounts={
                ("A1",): {"id": "A1", "bal": 5, "note": "x"},
                ("A2",): {"id": "A2", "bal": 0, "note": "y"},
            },
            transfers={},
        ),
    )
    actual = diff(INITIAL, snap(accounts={("A1",): {"id": "A1", "bal": 6, "note": "x"}}, transfers={}))
    entries = {(e.kind, e.key, e.column, str(e.expected), str(e.actual)) for e in compare(expected, actual)}
    assert entries == {("wrong", "A1", "bal", "5", "6"), ("extra", "A2", None, "(present)", "(deleted)")}
    entries = {(e.kind, e.key, e.column) for e in compare(actual, expected)}
    assert entries == {("wrong", "A1", "bal"), ("missing", "A2", None)}


def test_near_miss_new_row_reads_as_wrong_columns_and_far_miss_as_missing_plus_extra() -> None:
    def with_transfer(**row: object) -> Snapshot:
        return snap(accounts=INITIAL.tables["accounts"], transfers={("T-90001",): {"id": "<new:T>", **row}})

    exp = diff(INITIAL, with_transfer(amt=5, to="A2", source="A1"))
    near = diff(INITIAL, with_transfer(amt=6, to="A2", source="A1"))
    far = diff(INITIAL, with_transfer(amt=9, to="A9", source="A8"))
    assert [(e.kind, e.column, e.expected, e.actual) for e in compare(exp, near)] == [("wrong", "amt", 5, 6)]
    assert sorted(e.kind for e in compare(exp, far)) == ["extra", "missing"]


def test_overlay_applies_changed_rows_without_touching_the_original() -> None:
    over = INITIAL.overlay({"accounts": {("A1",): None, ("A3",): {"id": "A3", "bal": 1, "note": ""}}})
    assert set(over.tables["accounts"]) == {("A2",), ("A3",)}
    assert set(INITIAL.tables["accounts"]) == {("A1",), ("A2",)}


def test_generated_ids_are_recognised_only_in_the_issued_range() -> None:
    is_generated = generated_id_matcher({"BK": 90003})
    assert normalise("BK-90001", is_generated) == "<new:BK>"
    assert normalise("BK-90002", is_generated) == "<new:BK>"
    assert normalise("BK-90003", is_generated) == "BK-90003"
    assert normalise("BK-10417", is_generated) == "BK-10417"
    assert normalise("XX-90001", is_generated) == "XX-90001"


def test_ignored_columns_drop_out_of_both_sides_and_an_update_only_there_is_no_update() -> None:
    a2 = {"id": "A2", "bal": 0, "note": "y"}
    gold = snap(
        accounts={("A1",): {"id": "A1", "bal": 5, "note": "gold"}, ("A2",): a2},
        transfers={("T-90001",): {"id": "<new:T>", "amt": 5, "memo": "a"}},
    )
    agent = snap(
        accounts={("A1",): {"id": "A1", "bal": 5, "note": "x"}, ("A2",): {**a2, "note": "z"}},
        transfers={("T-90001",): {"id": "<new:T>", "amt": 5, "memo": "b"}},
    )
    expected, actual = diff(INITIAL, gold), diff(INITIAL, agent)
    assert compare(expected, actual)
    ignored = ["accounts.note", "transfers.memo"]
    assert compare(without_columns(expected, ignored), without_columns(actual, ignored)) == []
    assert "A2" not in str(without_columns(actual, ignored)["accounts"].updated)
    six = snap(
        accounts=gold.tables["accounts"], transfers={("T-90001",): {"id": "<new:T>", "amt": 6, "memo": "a"}}
    )
    entries = compare(without_columns(expected, ignored), without_columns(diff(INITIAL, six), ignored))
    assert [(e.table, e.column) for e in entries] == [("transfers", "amt")]
