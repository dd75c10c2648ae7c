"""Issue 19: a change of plan only the user states replaces the one decision it names
(`lifecycle.reversal.replaced_by`, the pure rule; the hook and MCP paths are tested in
tests/cli/test_user_reversal.py and tests/mcp/test_user_reversal_mcp.py)."""

from __future__ import annotations

from memstrata.lifecycle.reversal import replaced_by
from memstrata.model import LedgerEntry


def _e(uid: str, summary: str, kind: str = "decision") -> LedgerEntry:
    return LedgerEntry(uid, "2026-11-20T10:00:00Z", kind, None, "me", None, (), summary, None, None)


FIRMWARE = [
    _e("mem-00000001", "Report interval: one reading and one uplink every 15 minutes"),
    _e("mem-00000002", "Flash and log with probe-rs (connect under reset), defmt over RTT"),
    _e("mem-00000003", "Radio: lora-phy, SF10 at 14 dBm because SF7 did not reach bed 14"),
    _e("mem-00000004", "EU868 duty cycle: at most 1% airtime, also while testing", "constraint"),
]
INTERVAL = (
    "Change of plan on the reporting interval: the agronomist says soil moisture barely moves "
    "in a quarter of an hour. Send one reading every 30 minutes from now on, it halves the "
    "airtime too."
)
REGION = (
    "Before you apply anything: change of plan on the region. Our backups are in Ireland. "
    "Build all the new stuff in eu-west-1, not London. The old box stays until the cutover."
)


def test_a_change_of_plan_replaces_the_one_record_it_names() -> None:
    got = replaced_by(INTERVAL, FIRMWARE)
    assert got is not None and got.replaces.id == "mem-00000001"
    assert got.text.startswith("Report interval: ")  # the old label kept
    assert "every 30 minutes from now on" in got.text and "15 minutes" not in got.text
    infra = [
        _e("mem-00000010", "Region: eu-west-2 (London) for the new stack"),
        _e("mem-00000011", "Backups replicate nightly to a second region"),  # holds "region"
        _e("mem-00000012", "State in S3 with a DynamoDB lock table"),
    ]
    got = replaced_by(REGION, infra)  # two hold the word; the label decides
    assert got is not None and got.replaces.id == "mem-00000010"
    assert "eu-west-1, not London" in got.text and "Before you apply" not in got.text
    switched = replaced_by("Switch the radio to SF9 at 14 dBm, it reaches bed 14 now.", FIRMWARE)
    assert switched is not None and switched.replaces.id == "mem-00000003"


def test_no_subject_in_force_records_nothing() -> None:
    assert replaced_by("Change of plan on the antenna: use the external one.", FIRMWARE) is None
    assert replaced_by("From now on, write the changelog in English.", FIRMWARE) is None


def test_an_ambiguous_subject_records_nothing() -> None:
    two = [
        _e("mem-00000020", "Report interval: one reading every 15 minutes"),
        _e("mem-00000021", "Report interval for the gateway: every hour"),
    ]
    assert replaced_by(INTERVAL, two) is None


def test_without_a_signal_or_as_a_question_nothing_changes() -> None:
    assert (
        replaced_by("Send one reading every 30 minutes and report the interval.", FIRMWARE) is None
    )
    assert replaced_by("Can we change the reporting interval to 30 minutes?", FIRMWARE) is None
    assert replaced_by("Add the battery reading to the payload.", FIRMWARE) is None


def test_switch_x_to_y_is_a_task_unless_x_labels_a_record() -> None:
    records = [*FIRMWARE, _e("mem-00000030", "Button styles: Tailwind only, no CSS files")]
    assert replaced_by("Move the button to the header, from now on.", records) is None
    assert replaced_by("Switch the site to Hugo instead.", records) is None


def test_a_switch_spoken_of_as_a_noun_or_before_have_to_is_no_change_of_plan() -> None:
    """infra-saltmarsh, after the user's region change was recorded: "Do that. And keep the
    old box running for 48 hours after the switch in case we have to roll back." read as
    "switch ... to" (five words apart: "switch in case we have to") and replaced the region
    record with that sentence (rank19i saw "Region: And keep the old box running ...")."""
    region = [
        _e(
            "mem-00000030",
            "Region: Build all the new stuff in eu-west-1, not London. The old box stays "
            "where it is until the cutover.",
        )
    ]
    later = (
        "Do that. And keep the old box running for 48 hours after the switch in case we "
        "have to roll back."
    )
    assert replaced_by(later, region) is None
    assert (
        replaced_by("After the switch to eu-west-1 the old box needs to stay up.", region) is None
    )
    moved = replaced_by("Switch the region to eu-central-1, the old box can go.", region)
    assert moved is not None and moved.replaces.id == "mem-00000030"


GARDEN = [
    _e("mem-00000040", "Friday social: a pub quiz in the church hall with the Rotary quizmaster"),
    _e("mem-00000041", "Hall: St Anne's church hall, main room seats 90, £120 a day"),
    _e("mem-00000042", "Plant sale: Saturday 10:00-13:00 on the front lawn"),
]
DROPPED = (
    "The committee talked it over and they don't want the quiz after all, the quizmaster "
    "wants too much. Let's have a bring-and-share picnic instead, 17:00 to 19:00, same hall."
)


def test_a_plan_dropped_after_all_and_replaced_instead_names_its_subject_nearby() -> None:
    """events-heronsgate s07: the user drops a decision ("don't want X after all") in one
    sentence and says the new plan ("... instead") in the next, which names no subject."""
    got = replaced_by(DROPPED, GARDEN)
    assert got is not None and got.replaces.id == "mem-00000040"
    assert got.text.startswith("Friday social: Let's have a bring-and-share picnic instead")
    # most of the subject in the sentence before the bare "instead"
    said = "The Rotary quizmaster is too dear. Let's do a picnic social instead."
    got = replaced_by(said, GARDEN)
    assert got is not None and got.replaces.id == "mem-00000040"
    # a drop alone, and "let's drop the ..."
    alone = replaced_by("So not the pub quiz after all, the quizmaster cancelled.", GARDEN)
    assert alone is not None and alone.replaces.id == "mem-00000040"
    scrap = replaced_by("Let's drop the plant sale on the lawn, nobody has plants.", GARDEN)
    assert scrap is not None and scrap.replaces.id == "mem-00000042"


def test_instead_or_after_all_that_changes_nothing_in_force_records_nothing() -> None:
    # "instead" in a report of what happened, not a plan
    reported = "The church hall website was down, so I rang the hall's main room warden instead."
    assert replaced_by(reported, GARDEN) is None
    # a plan with "instead" whose words are in no record in force
    assert replaced_by("Let's use green bunting instead, it matches the logo.", GARDEN) is None
    # "after all" in sentences that drop nothing
    assert replaced_by("The pub quiz in the church hall was a good idea after all.", GARDEN) is None
    assert (
        replaced_by("The plant sale on the lawn did not get rained off after all.", GARDEN) is None
    )
    # a question states nothing; two candidates: nothing
    assert replaced_by("Should we not do the pub quiz after all?", GARDEN) is None
    two = [*GARDEN, _e("mem-00000043", "Saturday social: a pub quiz on the lawn")]
    assert replaced_by("So not the pub quiz after all.", two) is None


def test_a_neighbour_sentence_alone_does_not_name_the_subject() -> None:
    """The words that pick the record must reach into a signal sentence: a plan with
    "instead" after a sentence about the hall changes nothing of the hall."""
    said = "The church hall main room is booked. Let's do the raffle at noon instead."
    assert replaced_by(said, GARDEN) is None


HOUSE = [
    _e("mem-00000050", "Rear opening: a four-panel aluminium bifold door, 3.6 m wide, dark grey"),
    _e("mem-00000051", "Kitchen worktops: quartz, Caesarstone Pure White 20 mm"),
    _e("mem-00000052", "Kitchen floor: polished concrete over the underfloor heating"),
    _e("mem-00000053", "Builder: Nowak Build (Marek Nowak), starting Monday 8 March"),
    _e("mem-00000054", "No site meetings or trade calls on Wednesdays", "constraint"),
    _e("mem-00000055", "A short summary email every Friday afternoon", "preference"),
]


def test_a_named_subject_the_record_holds_in_part_is_found_by_the_words_around_it() -> None:
    """renovation-ashgrove s09: "Change of plan on the back doors" names a subject no record
    holds whole ("back"; the record says "Rear opening: ... bifold door"): nothing was
    replaced. The prompt's words around the signal pick the record, which must hold a word
    of the subject; the old label is kept."""
    said = (
        "Change of plan on the back doors: we saw another job and the bifold frames look "
        "chunky whether they're open or shut. We'd rather have a three-panel sliding door, "
        "same width, same grey."
    )
    got = replaced_by(said, HOUSE)
    assert got is not None and got.replaces.id == "mem-00000050"
    assert got.text.startswith("Rear opening: ") and "three-panel sliding door" in got.text
    # the words around pick a record that holds no word of the subject: nothing
    other = "Change of plan on the back garden: the bifold door frames look chunky, grey."
    assert replaced_by(other, HOUSE) is None


def test_the_family_of_a_users_change_of_plan_replaces_the_record_it_names() -> None:
    """A change of plan in the words a user uses for one: "we'd rather", "let's go with X
    instead", "switch to", "actually, make ..."; each replaces the one record of its subject."""
    for said, uid in (
        ("We'd rather have oak worktops, the quartz feels cold.", "mem-00000051"),
        ("I'd prefer oak for the kitchen worktops after all that.", "mem-00000051"),
        ("Let's go with porcelain tiles for the kitchen floor instead.", "mem-00000052"),
        ("Switch the builder to Kerr & Sons, they can start in March.", "mem-00000053"),
        ("Actually, make the kitchen floor large porcelain tiles.", "mem-00000052"),
    ):
        got = replaced_by(said, HOUSE)
        assert got is not None and got.replaces.id == uid, said
        assert said.split(",")[0].rstrip(".") in got.text


def test_a_wish_on_another_subject_replaces_nothing() -> None:
    """A bare "we'd rather" is a wish, not always a change of plan: it replaces only a
    record whose label it names. On another subject, or on a record with no label that it
    shares words with ("site meetings"), nothing is replaced."""
    for said in (
        "We'd rather have the Friday update by text message.",
        "We'd rather have the site meetings at nine, Tom's on nights.",
        "I'd rather you rang Marek than emailed him.",
        "We'd rather not hear about the heat pump grant until it comes through.",
    ):
        assert replaced_by(said, HOUSE) is None, said
