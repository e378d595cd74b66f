"""The "wide-dev3" wording frames: a THIRD development set for the program writer (train role, 2026-12-06).

Written after the writer had saturated "wide-dev" (142 of 144) and "wide-dev2" while the hidden
paraphrase split stayed at 70 %: a sign that the writer had learnt the two dev sets' habits. This set
is written in yet another register (requests wrapped in context, passives, inversions, texting
shorthand, long lead-ins before the question), 5 frames per question key, 3 per evidence key and 2 per
near-miss key, and shares no word 4-gram with any expansion of a "train", "test", "dev" or "dev2"
frame of the same key (tests/test_grammars.py; the failures name only keys and indices, never a
test frame's words). Data only: scroll.tasks.grammars adds it as `GRAMMARS[key]["dev3"]`.
"""
from __future__ import annotations

DEV3: dict[str, list[str]] = {
    # ------------------------------------------------------------------ update_city
    "city_q": [
        "I'm filling in a delivery form and my mind went blank: what city goes on it at the moment?",
        "Could you look up which town I reside in right now?",
        "Quick sanity check, what city is home for me currently?",
        "Remind me which city my address is in these days.",
        "So after everything, which city did I end up in, as of today?",
    ],
    "city_move": [
        "Boxes finally emptied in {x}, relocation done and dusted.",
        "The moving truck dropped everything off at my new flat in {x}.",
        "Address change: I'm a {x} resident as of this move.",
    ],
    "city_restate": [
        "Sunday market in {x} again, I adore living here.",
        "Honestly {x} suits me, this city feels like home.",
        "My commute across {x} is short, one perk of living here.",
    ],
    "city_live": [
        "Power cut in {x} all afternoon, where I live everything stopped.",
        "Paying {x} prices for a tiny kitchen is no joke.",
    ],
    "city_neighbor": [
        "A truck came for the pair next door, bound for {x}.",
        "Our upstairs neighbour says {x} is their next home.",
    ],
    "city_maybe": [
        "Some other lifetime I'd put down roots in {x}.",
        "Daydreaming about {x}, maybe when the kids are grown.",
    ],
    "city_visit": [
        "Short work trip: {x} for two nights, then home.",
        "Hotel booked in {x}, a quick getaway before work resumes.",
    ],
    "city_past": [
        "Ages ago I shared a flat in {x} with three roommates.",
        "During my university days, {x} was home.",
    ],
    "city_friend": [
        "{f} sent photos of their new balcony in {x}.",
        "Video call with {f}, who rents in {x} lately.",
    ],
    # ------------------------------------------------------------------ update_employer
    "job_q": [
        "Filling in a background check form; who is my employer at the moment?",
        "Could you dig up the company I'm working for right now?",
        "Which outfit signs my paychecks currently?",
        "Remind me who employs me at present.",
        "So after all those job changes, whose company is it today?",
    ],
    "job_start": [
        "Onboarding wrapped, I officially work for {x} starting this week.",
        "Badge photo taken, laptop issued: I'm a {x} employee.",
        "Said yes to the offer and began working at {x}.",
    ],
    "job_join": [
        "Resigned from the old place and went to {x}, signed and sealed.",
        "Made it official, I'm on the payroll at {x}.",
        "Everyone at {x} welcomed me aboard, my role there is settled.",
    ],
    "job_now": [
        "Endless slide decks at {x} this quarter.",
        "Deadline crunch at {x}, working late again.",
    ],
    "job_interview": [
        "Sent a take-home case study off to {x}, results pending.",
        "One more round of calls with {x}, says their hiring manager.",
    ],
    "job_friend": [
        "{f} scored a position with {x}, proud of them.",
        "Coffee with {f}; they love working at {x}.",
    ],
    "job_recruiter": [
        "A headhunter won't stop emailing about {x}, ignoring it.",
        "LinkedIn pitch from {x} landed in my inbox, not biting.",
    ],
    "job_rel": [
        "My {rel} stepped down from {x} after a long career.",
        "My {rel} got a bonus at {x}, drinks on them.",
    ],
    # ------------------------------------------------------------------ relative_city
    "rel_q": [
        "I want to surprise my {rel} with a visit; where should I fly at the moment to find them?",
        "Could you look up the town where my {rel} resides right now?",
        "Remind me what city my {rel} resides in these days.",
        "After their move, which town has my {rel} got an address in currently?",
        "So, as of today, what city holds my {rel}'s address?",
    ],
    "rel_moved": [
        "Moving vans and tears: my {rel} has packed up for good and is a {x} resident.",
        "Big news from my {rel}, the relocation to {x} went through.",
        "My {rel} took a lease on a flat in {x}, so that is where home is.",
    ],
    "rel_lives": [
        "Sent a parcel to my {rel} at their {x} address.",
        "My {rel} complains about the parking in {x} constantly.",
    ],
    "rel_visit": [
        "Postcard from my {rel}, holidaying around {x} this fortnight.",
        "My {rel} attends a conference over in {x}, flying home soon.",
    ],
    "rel_maybe": [
        "My {rel} dreams out loud about a cottage in {x}.",
        "My {rel} may consider {x} someday, no real plans though.",
    ],
    "rel_friend": [
        "A buddy my {rel} knows found a job in {x}.",
        "Someone my {rel} used to room with snapped up a house in {x}.",
    ],
    "rel_grew": [
        "My {rel} grew tall on a farm near {x}, way before I was born.",
        "Family roots: my {rel} comes from {x} originally.",
    ],
    # ------------------------------------------------------------------ count_<activity>
    "dentist_q": [
        "My insurer asks for a tally of dental visits I made; what's the number?",
        "Could you count up every dental appointment I went to?",
        "How many checkups at the dentist have I had in all?",
        "For my records, what number of visits to the dentist did I make?",
        "Dentist: how many sessions in that chair did I end up with?",
    ],
    "dentist_pos": [
        "I endured a dentist appointment {when}, the hygienist was gentle and {aside}.",
        "I got my dental cleaning over with {when}; {aside}.",
        "Teeth polished by my dentist {when}, {aside}.",
    ],
    "yoga_q": [
        "For my fitness log, tell me the count of yoga classes I attended.",
        "Could you count up every yoga session I went to?",
        "My yoga tally to date, please?",
        "Give me the number: yoga sessions, mine, all of them?",
        "Yoga: how many classes have I done in total?",
    ],
    "yoga_pos": [
        "Stretched out on the mat at yoga {when}, I did; {aside}.",
        "I showed my face at yoga {when}; {aside}.",
        "Downward dog and all, I practiced yoga {when}, {aside}.",
    ],
    "haircut_q": [
        "Trying to budget my grooming: count my haircuts, please.",
        "Could you count up my barber appointments?",
        "What's my haircut count up to?",
        "Tally my salon visits for me?",
        "Haircuts: how many did I end up getting in all?",
    ],
    "haircut_pos": [
        "I got my hair chopped at a salon {when}; {aside}.",
        "The barber faded my sides {when}, and {aside}.",
        "My hair got buzzed short by a barber {when}; {aside}.",
    ],
    # ------------------------------------------------------------------ meet_friend
    "meet_q": [
        "I promised {friend} a tally: how many rounds of {act} have we done together, me included?",
        "Could you count up the {act} outings for {friend} and me?",
        "The number of times {friend} met me for {act} is what?",
        "How many occasions saw {friend} and me at {act}, by my records?",
        "Meeting {friend} for {act}: how often did that happen for me?",
    ],
    "meet_pos": [
        "I spent a lovely hour at {act}, {friend} beside me, {when}; {aside}.",
        "{friend} kept me company at {act} {when}: great time; {aside}.",
        "{friend} dragged me to {act} {when}; we had a blast, {aside}.",
    ],
    "meet_plan": [
        "{friend} floated the idea of {act}, no date penciled.",
        "Hoping {friend} and I get to {act} sometime.",
    ],
    "meet_cancel": [
        "Our {act} plans with {friend} {when} fell through at the last minute.",
        "{friend} bailed, so no {act} {when}.",
    ],
    "meet_rel": [
        "While I worked {when}, my {rel} went off for {act} alongside {friend}.",
        "{friend} brought my {rel} along to {act} {when}; I was stuck indoors.",
    ],
    # ------------------------------------------------------------------ date_adopt
    "adopt_q": [
        "The vet's paperwork needs the day of {pet}'s adoption, any idea?",
        "Could you look up when {pet} became part of my household?",
        "{pet} has been mine since which date?",
        "Remind me of the day I took in {pet}.",
        "{pet}'s adoption: when did that happen?",
    ],
    "adopt_pos": [
        "Papers signed and {pet} is mine, adopted {when}.",
        "The shelter let me bring {pet} home {when}, best decision ever.",
        "A {breed} called {pet} joined my household {when}.",
    ],
    "adopt_think": [
        "Tempted by a {breed}, only browsing for now.",
        "Dreaming about a {breed}, nothing yet.",
    ],
    "adopt_shelter": [
        "Walked a {breed} around the shelter yard, no commitment though.",
        "The rescue showed me a {breed}; torn about it.",
    ],
    "adopt_chewed": [
        "{pet} shredded the couch cushion.",
        "{pet} dug a hole in the garden, muddy paws everywhere.",
    ],
    "adopt_neighbor": [
        "Next door they picked up a rescue mutt, {other}, {when}.",
        "The upstairs family welcomed a kitten, {other}, {when}.",
    ],
    "adopt_rel": [
        "My {rel} went and adopted a terrier named {other} {when}.",
        "My {rel} now has a puppy named {other}, since {when}.",
    ],
    "adopt_settled": [
        "{pet} sleeps all night long, finally.",
        "{pet} has stopped hiding under the bed.",
    ],
    # ------------------------------------------------------------------ date_race
    "race_q": [
        "Updating my running log: the {race} took place on which date for me?",
        "Could you look up when I was a participant in the {race}?",
        "I competed in the {race}; what was the date?",
        "Remind me of the day I was in the {race}.",
        "The {race}, when was that one for me?",
    ],
    "race_pos": [
        "Medal around my neck: {race} completed {when}, chip time {finish}.",
        "I crossed that {race} finish line {when} and {aside}.",
        "Raced in the {race} {when}, clocked {finish}.",
    ],
    "race_signup": [
        "Got my bib for the {race}.",
        "Registration confirmed for the {race}, committed now.",
    ],
    "race_training": [
        "Tempo intervals today for the {race}, lungs burning.",
        "Logging big mileage to prepare for the {race}.",
    ],
    "race_rel": [
        "My {rel} cheered from the sidelines of the {race} once.",
        "My {rel} hopes to walk the {race}.",
    ],
    "race_sore": [
        "Calves still hurt after the {race}.",
        "Framed my {race} bib.",
    ],
    # ------------------------------------------------------------------ sums
    "bike_q": [
        "Working out my budget: what have I spent altogether on fixing my bike?",
        "Could you add up the bill total for my bike repairs?",
        "My bicycle repairs so far came to what?",
        "Tally up my payments to the bike shop for repairs.",
        "Bike repairs: what did they cost me overall?",
    ],
    "bike_paid": [
        "The mechanic billed me ${amt} to do {item} on the bike.",
        "Bike repair done ({item}) and {amt} dollars poorer.",
        "Forked out {amt} bucks to get {item} done on the bike.",
    ],
    "taxi_q": [
        "Working out my budget: what have I spent altogether on taxis?",
        "Could you add up my cab rides?",
        "My taxi fares so far came to what?",
        "Tally my cab spending, please.",
        "Taxis: what did they cost me overall?",
    ],
    "taxi_paid": [
        "The driver charged me ${amt} for the ride to {item}.",
        "Cab to {item} and {amt} dollars poorer.",
        "Forked out {amt} bucks for a cab across town to {item}.",
    ],
    "grocery_q": [
        "Working out my budget: what have I spent altogether on groceries?",
        "Could you add up my grocery runs?",
        "My grocery shopping so far came to what?",
        "Tally up my grocery spending.",
        "Groceries: what did they cost me overall?",
    ],
    "grocery_paid": [
        "The checkout at {item} charged me ${amt} for the groceries.",
        "Groceries from {item} and {amt} dollars poorer.",
        "Forked out {amt} bucks at {item} for groceries.",
    ],
}
