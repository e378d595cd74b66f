"""Hand-written grammars for the "wide-train", "wide-test", "wide-dev", "wide-dev2" (and "wide-dev3") wording variants
(issue #27 item 3).

    WIDE_TRAIN["city_move"]     # frames a train-role split writes with
    WIDE_TEST["city_move"]      # frames only test-role splits write with (disjoint from WIDE_TRAIN)
    WIDE_DEV["city_move"]       # development frames (train role), disjoint from both of the above
    WIDE_DEV2["city_move"]      # a second development set (train role), disjoint from all three
    expand("I [just|finally] moved to {x}.", rng)  -> "I finally moved to {x}."

A grammar per key is a list of FRAMES: distinct sentence structures (a statement, a fragment,
a question opening with another word...), each one wording. A frame holds the family's slots
(`{x}`, `{f}`, `{rel}`, `{pet}`, `{breed}`, `{other}`, `{race}`, `{finish}`, `{aside}`,
`{when}`, `{friend}`, `{act}`, `{amt}`, `{item}`: the names scroll.tasks.families passes to
`Gen.say`) and small alternation groups `[a|b|c]` (an empty option drops the group), which do
not make a new wording. `Gen.say` picks a frame with the rng it is given, then `expand` draws
every group, left to right, with the same rng, then the slots are filled.

Per key, the "train" frames and the "test" frames are disjoint down to word 4-grams: no
4-gram of any expansion of a test frame (lowercased, punctuation stripped, every slot one
token `<slot>`) occurs in any expansion of a train frame of the same key (tests/test_grammars.py).
The "dev" frames (`WIDE_DEV`, 8 per question / evidence key, 3 per near-miss key; defined after
`GRAMMARS` and added to it as `GRAMMARS[key]["dev"]`) share no such 4-gram with either of them.
What the labels rest on holds in every frame (also tested): the value slot occurs exactly once
in each evidence sentence; date evidence carries `{when}` and no other time word; sum evidence
carries the amount as `${amt}`, `{amt} dollars` or `{amt} bucks` and no other number; count
evidence says that I did the activity, once, in the past; entity questions ask for the current
value; near misses stay near misses (someone else, a plan, a hypothetical, a visit, the past).

`FAMILY_KEYS` names, per family, its question key, its answer-bearing evidence keys and its
near-miss keys (the count and sum families' near misses are scroll.tasks.families'
ACTIVITIES / SUMS "neg" lists, shared by every wording).
"""
from __future__ import annotations

import random
import re

from scroll.tasks.grammar_dev3 import DEV3

FAMILY_KEYS: dict[str, dict] = {
    "update_city": {"question": "city_q", "evidence": ["city_move", "city_restate"],
                    "near": ["city_live", "city_neighbor", "city_maybe", "city_visit", "city_past", "city_friend"]},
    "update_employer": {"question": "job_q", "evidence": ["job_start", "job_join"],
                        "near": ["job_now", "job_interview", "job_friend", "job_recruiter", "job_rel"]},
    "relative_city": {"question": "rel_q", "evidence": ["rel_moved"],
                      "near": ["rel_lives", "rel_visit", "rel_maybe", "rel_friend", "rel_grew"]},
    "count_dentist": {"question": "dentist_q", "evidence": ["dentist_pos"], "near": []},
    "count_yoga": {"question": "yoga_q", "evidence": ["yoga_pos"], "near": []},
    "count_haircut": {"question": "haircut_q", "evidence": ["haircut_pos"], "near": []},
    "meet_friend": {"question": "meet_q", "evidence": ["meet_pos"], "near": ["meet_plan", "meet_cancel", "meet_rel"]},
    "date_adopt": {"question": "adopt_q", "evidence": ["adopt_pos"],
                   "near": ["adopt_think", "adopt_shelter", "adopt_chewed", "adopt_neighbor", "adopt_rel",
                            "adopt_settled"]},
    "date_race": {"question": "race_q", "evidence": ["race_pos"],
                  "near": ["race_signup", "race_training", "race_rel", "race_sore"]},
    "sum_bike": {"question": "bike_q", "evidence": ["bike_paid"], "near": []},
    "sum_taxi": {"question": "taxi_q", "evidence": ["taxi_paid"], "near": []},
    "sum_groceries": {"question": "grocery_q", "evidence": ["grocery_paid"], "near": []},
}


def _g(train: list[str], test: list[str]) -> dict[str, list[str]]:
    return {"train": train, "test": test}


GRAMMARS: dict[str, dict[str, list[str]]] = {
    # ------------------------------------------------------------------ update_city
    "city_q": _g([
        "Which city do I [live in|call home] [now|these days]?",
        "Remind me, where am I living [now|currently]?",
        "Quick question: what city am I [based in|living in] right now?",
        "Do you know which city I currently live in?",
        "What's my current city?",
        "Where do I live [now|these days]? Just checking what you remember.",
        "Can you tell me [what|which] city I'm living in as of now?",
        "In which city do I [currently reside|reside at the moment]?",
        "Name the city I [live in|am living in] now, please.",
        "My city of residence at this point, do you remember it?",
    ], [
        "If someone wanted to mail me something these days, which town would it go to?",
        "What place am I calling home at present?",
        "Where's home for me right now, city-wise?",
        "After all my moving around, where have I ended up for now?",
        "Tell me the name of the city where I'm living nowadays.",
    ]),
    "city_move": _g([
        "Big news: I [just|finally] moved to {x}! [Still surrounded by boxes.|Boxes everywhere.]",
        "We've officially relocated to {x}, [the new apartment is small but bright|still unpacking].",
        "Moving is done, I now live in {x}.",
        "The movers dropped off the last boxes and I'm [officially|finally] a {x} resident.",
        "So I live in {x} now, the move went [smoothly|surprisingly well].",
        "Just signed for a flat in {x} and [moved in|carried everything up].",
        "Update on my end: home is {x} [as of this week|from now on].",
        "After weeks of packing, I [finally|] made the move to {x}.",
        "I'm writing this from my new place in {x}[!|, still no curtains.]",
        "Left my old city behind and settled in {x}[, what a week|].",
    ], [
        "Guess who's a {x} local now? Me. The truck came and went.",
        "New chapter: my whole life is packed into an apartment in {x} these days.",
        "Got the keys, unpacked the kettle, and {x} is officially where I reside.",
        "Officially changed my address to {x}, the relocation is complete.",
        "Home sweet home, {x} edition: we're all moved.",
    ]),
    "city_restate": _g([
        "Living in {x} is [treating me well|growing on me], [I love the markets|the coffee is great].",
        "Life in {x} has settled into a nice rhythm.",
        "Now that I'm properly settled in {x}, I [finally have a routine|know my neighbors].",
        "{x} really feels like home now.",
        "The more time I spend living in {x}, the more I like it.",
        "One thing I love about living in {x}: [the parks|the food scene|the trams].",
        "I'm still in {x}, [no plans to leave|and happy here].",
        "I don't miss my old city at all now that I'm in {x}.",
        "Honestly, {x} was the right call, I'm happy living here.",
        "Our place in {x} is finally feeling lived-in.",
    ], [
        "These days my walks take me all over {x}, which I adore.",
        "Whoever said {x} was boring never tried staying here, I'm loving it.",
        "Home base remains {x}, and the markets here are the best.",
        "Settled, content and staying put: that's me in {x}.",
        "My neighborhood in {x} has the best bakery, I go constantly.",
    ]),
    "city_live": _g([
        "For context, I live in {x} and mostly work from home.",
        "I'm based in {x}, so the weather is always a factor for me.",
        "Being a {x} resident, I always check the forecast first.",
        "My apartment in {x} gets [great|terrible] light.",
    ], [
        "Background on me: my home is {x}, remote job.",
        "Here in {x} we get rain constantly, so keep that in mind.",
        "{x} is where I'm staying at the moment, in case it matters.",
        "Side note: my flat is over in {x}.",
    ]),
    "city_neighbor": _g([
        "My neighbor [just|recently] moved to {x} for a new job.",
        "The couple next door packed up and left for {x}.",
        "Our upstairs neighbor is relocating to {x}, sad to see them go.",
        "Heard my neighbor found work in {x} and moved out.",
    ], [
        "The flat next to mine is empty now, they headed off to {x}.",
        "The family across the hall took off to {x}.",
        "A neighbor of mine has a {x} address now, she got transferred.",
        "Said goodbye to the folks downstairs, they're {x} people now.",
    ]),
    "city_maybe": _g([
        "Sometimes I think I might move to {x} one day, but not anytime soon.",
        "If I ever moved, it would probably be to {x}.",
        "I keep daydreaming about living in {x} someday.",
        "Would I move to {x}? Maybe, in a few years.",
    ], [
        "Part of me wonders what life in {x} would be like, purely hypothetically.",
        "{x} is on my wish list of places to settle eventually.",
        "Not planning anything, but {x} tempts me as a future home.",
        "In another life I'd be based in {x}.",
    ]),
    "city_visit": _g([
        "I'm visiting {x} next week for a conference.",
        "Heading to {x} for a few days, work trip.",
        "Got a weekend trip to {x} planned.",
        "I'll be in {x} briefly for a wedding, then back home.",
    ], [
        "Conference in {x} coming up, short stay.",
        "Booked a hotel in {x} for a quick getaway.",
        "Flying out to {x} on Thursday, back Sunday.",
        "Note to self: trip to {x} soon, pack light.",
    ]),
    "city_past": _g([
        "I lived in {x} back in college, feels like ages ago.",
        "Years ago I spent a couple of years in {x}.",
        "Back when I was a student I rented a tiny room in {x}.",
        "{x} was home for a while in my twenties.",
    ], [
        "My university days were spent in {x}, long time ago.",
        "Ages back, before all this, I had an apartment in {x}.",
        "Fun fact: I used to live in {x} as a kid.",
        "Once upon a time I was a {x} local, way back.",
    ]),
    "city_friend": _g([
        "My friend {f} moved to {x} last month, funny coincidence.",
        "{f} just relocated to {x} for work.",
        "Did I mention {f} lives in {x} now?",
        "Got a postcard from {f}, who's living in {x} these days.",
    ], [
        "{f} packed up and headed to {x}, small world.",
        "Turns out {f} has made a home in {x}.",
        "My buddy {f} took a job in {x} and went there.",
        "Heard from {f}: new apartment, new city, {x}.",
    ]),
    # ------------------------------------------------------------------ update_employer
    "job_q": _g([
        "Which company do I work for [now|these days]?",
        "Remind me where I'm working [at the moment|currently].",
        "Quick question: who's my [current|present] employer?",
        "Do you know which company I'm employed at now?",
        "What's the name of the company I work at now?",
        "Where do I work [now|these days]?",
        "Can you tell me which company employs me now?",
        "Which firm am I at [right now|currently]?",
        "Who am I working for [nowadays|at this point]?",
        "My current job: which company is it again?",
    ], [
        "Who signs my paychecks at present?",
        "What should I tell people when they ask about my employer nowadays?",
        "Any idea which organisation I'm with as of today?",
        "Employer check: what's the company on my badge these days?",
        "Which place has me on payroll right now?",
    ]),
    "job_now": _g([
        "I work at {x} on the platform team, so my days are mostly meetings.",
        "At {x} we have way too many meetings.",
        "My job at {x} keeps me busy.",
        "Work at {x} is hectic [this quarter|lately].",
    ], [
        "I'm an engineer over at {x}, for context.",
        "{x} is my employer, in case that matters for advice.",
        "My team at {x} ships on Fridays, so I'm wiped by the weekend.",
        "Being on staff at {x} means lots of calls.",
    ]),
    "job_start": _g([
        "Today was my first day at {x}! Everyone seems nice.",
        "I started my new job at {x} [this week|on Monday].",
        "Big news: I accepted the offer and now work at {x}.",
        "First week at {x} done, [the onboarding is a lot|I like my team].",
        "I'm officially a {x} employee as of this week.",
        "Just joined {x}, still learning everyone's names.",
        "Changed jobs: I now work for {x}.",
        "Got my badge and laptop at {x}, so it's real now.",
        "Started at {x}, the commute is actually fine.",
        "My new employer is {x}, and so far so good.",
    ], [
        "Said goodbye to my old team and clocked in at {x} for the first time.",
        "Onboarding paperwork signed, I'm on the {x} payroll.",
        "Fresh start at {x}: new desk, new people, new role.",
        "From here on, my paycheck comes from {x}.",
        "The {x} gig has begun and my old job is behind me.",
    ]),
    "job_join": _g([
        "I just joined {x} as a senior engineer, first week done.",
        "Switched jobs again, I'm at {x} now.",
        "New role at {x} started this week.",
        "I left my last job and signed on with {x}.",
        "Another change: I work at {x} now, went through onboarding already.",
        "Officially started at {x} on Monday.",
        "Guess where I work now? {x}!",
        "Took the offer from {x} and I've already started.",
        "Day one at {x} went well, nice people.",
        "My employer changed once more, now it's {x}.",
    ], [
        "Handed in my notice, and {x} is where I clock in every morning.",
        "Badge photo taken: I'm a member of the {x} staff.",
        "Moved on to {x}, first payday soon.",
        "My latest job hop landed me at {x}, and I've begun there.",
        "Update: these days I'm employed by {x}, just finished orientation.",
    ]),
    "job_interview": _g([
        "I had an interview at {x} but I don't think I'll take it.",
        "Interviewed with {x} this week, not convinced.",
        "{x} wants a second interview, not sure I care.",
        "Did a phone screen with {x}, probably not for me.",
    ], [
        "Talked to a hiring manager from {x}, I'll likely pass.",
        "There's an offer on the table from {x} but I'm declining.",
        "Went through a round of calls at {x}, meh.",
        "Case study for {x} submitted, not excited about it.",
    ]),
    "job_friend": _g([
        "My friend {f} got a job at {x}.",
        "{f} just started working at {x}.",
        "Congrats are due to {f}, who's joining {x}.",
        "{f} tells me {x} hired them.",
    ], [
        "{f} landed a position over at {x}.",
        "Guess who {x} just brought on board: {f}.",
        "Celebrating {f}'s new role at {x} soon.",
        "{f} is onboarding at {x}, lucky them.",
    ]),
    "job_recruiter": _g([
        "A recruiter from {x} reached out again, I ignored it.",
        "Got another LinkedIn message from {x}, not interested.",
        "{x} keeps emailing me about roles.",
        "Some recruiter at {x} wants to chat, no thanks.",
    ], [
        "My inbox has yet another pitch from {x}.",
        "Declined a call from a {x} headhunter.",
        "{x} HR slid into my messages, I left them on read.",
        "Spam from {x} recruiting, deleted.",
    ]),
    "job_rel": _g([
        "My {rel} used to work at {x}, small world.",
        "My {rel} spent years at {x} before retiring.",
        "Back in the day my {rel} had a job at {x}.",
        "My {rel} was employed by {x} for a long time.",
    ], [
        "Fun coincidence, {x} was my {rel}'s first employer.",
        "My {rel} knows {x} well, worked there ages ago.",
        "Long before me, my {rel} did a stint at {x}.",
        "There's a photo of my {rel} at a {x} holiday party from decades back.",
    ]),
    # ------------------------------------------------------------------ relative_city
    "rel_q": _g([
        "Where does my {rel} live [now|these days]?",
        "Remind me which city my {rel} is living in [now|at the moment].",
        "Quick question: what city is my {rel} in right now?",
        "Do you know where my {rel} lives currently?",
        "What's my {rel}'s current city?",
        "Which city does my {rel} call home [now|these days]?",
        "Can you tell me where my {rel} is based [now|at present]?",
        "In which city does my {rel} live at this point?",
        "My {rel} lives where nowadays?",
        "Where's my {rel} living [now|currently]?",
    ], [
        "If I mailed my {rel} a birthday card today, what city would it go to?",
        "Any idea what town my {rel} has ended up in as of now?",
        "Current address of my {rel}, city only?",
        "Tell me the city my {rel} calls home these days.",
        "Which place is my {rel} settled in nowadays?",
    ]),
    "rel_moved": _g([
        "My {rel} just moved to {x}, we helped with the boxes.",
        "My {rel} finally relocated to {x} for work.",
        "Big family news: my {rel} now lives in {x}.",
        "My {rel} packed up and moved to {x}.",
        "Helped my {rel} carry furniture into the new place in {x}.",
        "My {rel} is officially a {x} resident now.",
        "So my {rel} made the move to {x}, [new job and all|finally].",
        "Spent hours unpacking with my {rel}, who just moved to {x}.",
        "My {rel} signed a lease in {x} and moved in.",
        "My {rel} has settled in {x} after the move.",
    ], [
        "Guess what: {x} is home for my {rel} these days, the truck came and went.",
        "The movers just dropped off all of my {rel}'s stuff in {x}.",
        "My {rel} said goodbye to the old place, new address is in {x}.",
        "Change of address for my {rel}: {x}, effective immediately.",
        "My {rel} traded the old town for {x}, unpacking as we speak.",
    ]),
    "rel_lives": _g([
        "My {rel} lives in {x}, a short flight away.",
        "My {rel} is in {x}, so we mostly talk on the phone.",
        "Over in {x}, my {rel} has a little house.",
        "My {rel}'s place in {x} is lovely.",
    ], [
        "Home for my {rel} is {x}, a few hours from me.",
        "My {rel} is a {x} local, we visit when we can.",
        "I call my {rel} in {x} every Sunday.",
        "My {rel} rents an apartment in {x}.",
    ]),
    "rel_visit": _g([
        "My {rel} is visiting {x} next week.",
        "My {rel} has a trip to {x} coming up.",
        "My {rel} will spend a few days in {x} for a wedding.",
        "My {rel} flew to {x} for a conference, back soon.",
    ], [
        "Holiday plans: my {rel} is off to {x} this summer.",
        "My {rel} booked a hotel in {x}, short getaway.",
        "My {rel} is sightseeing in {x} right now, then heading home.",
        "Postcard incoming: my {rel} is touring {x}.",
    ]),
    "rel_maybe": _g([
        "My {rel} keeps talking about moving to {x} someday.",
        "My {rel} might move to {x} eventually, nothing decided.",
        "My {rel} dreams of living in {x}.",
        "My {rel} is considering {x} for retirement, maybe.",
    ], [
        "If my {rel} ever relocates, {x} is the top pick.",
        "My {rel} browses apartments in {x} for fun, no real plans.",
        "One of these years, my {rel} says, it'll be {x}.",
        "My {rel} fantasizes about a quiet life in {x}.",
    ]),
    "rel_friend": _g([
        "My {rel}'s best friend moved to {x}.",
        "A friend of my {rel} just relocated to {x}.",
        "My {rel}'s old roommate lives in {x} now.",
        "My {rel} has a buddy who moved to {x}.",
    ], [
        "My {rel}'s closest pal has settled in {x}.",
        "Someone my {rel} knows from school is in {x} these days.",
        "My {rel} keeps in touch with a pal who left for {x}.",
        "My {rel}'s college friend packed up for {x}.",
    ]),
    "rel_grew": _g([
        "My {rel} grew up in {x}, so the accent is strong.",
        "My {rel} spent childhood in {x}.",
        "My {rel} was raised in {x}.",
        "My {rel} is originally from {x}.",
    ], [
        "As a kid my {rel} ran around the streets of {x}.",
        "{x} is where my {rel} was born and raised.",
        "My {rel}'s childhood home was in {x}.",
        "My {rel} has {x} roots, went to school there as a child.",
    ]),
    # ------------------------------------------------------------------ count_dentist
    "dentist_q": _g([
        "How many times did I go to the dentist?",
        "How many dentist appointments have I [had|been to]?",
        "Remind me how many times I've seen the dentist.",
        "Quick question: how many dental visits did I [make|have]?",
        "Do you know how often I went to the dentist?",
        "What's the number of times I've been to the dentist?",
        "Any idea how many dentist visits I've had?",
        "Count my trips to the dentist for me, please.",
        "How often have I actually been in the dentist's chair?",
        "Can you tally how many dental appointments I actually went to?",
    ], [
        "Dentist visits: what's my total so far?",
        "Over everything I've told you, on how many occasions did I get my teeth looked at?",
        "Give me a count of my dental checkups.",
        "I've lost track: how many teeth cleanings have I gone to?",
        "Number of times I sat in a dental chair, please?",
    ]),
    "dentist_pos": _g([
        "I went to the dentist {when}, {aside}.",
        "I just got back from the dentist, {aside}.",
        "I had a dental checkup {when}; {aside}.",
        "My dentist appointment was {when}, {aside}.",
        "I sat through a cleaning at the dentist {when}, {aside}.",
        "Got my teeth cleaned at the dental office {when}, {aside}.",
        "Checkup done: I was in the dentist's chair {when}, {aside}.",
        "I saw my dentist {when} for a routine visit, {aside}.",
        "Finally made it to my dental appointment {when}, {aside}.",
        "I survived the dentist {when}, {aside}.",
    ], [
        "The hygienist scraped and polished my teeth {when}, {aside}.",
        "Kept the appointment with my dentist {when} like a responsible adult, {aside}.",
        "Got my teeth professionally cleaned {when}, {aside}.",
        "I showed up for the dentist {when} and got it over with, {aside}.",
        "Routine dental exam for me {when}, all done, {aside}.",
    ]),
    # ------------------------------------------------------------------ count_yoga
    "yoga_q": _g([
        "How many yoga classes did I attend?",
        "How many times did I go to yoga?",
        "Remind me how many yoga sessions I've done.",
        "Quick question: how often did I make it to yoga class?",
        "Do you know how many times I've been to the yoga studio?",
        "What's my yoga class count?",
        "Any idea how many yoga classes I've actually shown up for?",
        "How often have I done yoga [in total|overall]?",
        "Can you count the yoga sessions I went to?",
        "Tell me the number of yoga classes I've taken.",
    ], [
        "Yoga attendance check: how many sessions have I made it to?",
        "How many separate times have I been on the mat in a yoga class?",
        "Give me a tally of my yoga practice sessions.",
        "I keep forgetting: on how many occasions did I practise yoga?",
        "Number of yoga sessions I've attended, please?",
    ]),
    "yoga_pos": _g([
        "I went to a yoga class {when}, {aside}.",
        "I did a yoga class {when} and my back feels better.",
        "I made it to yoga {when}, {aside}.",
        "I rolled out my mat at the yoga studio {when}, {aside}.",
        "I took a vinyasa class {when}, {aside}.",
        "My yoga session {when} was exactly what I needed, {aside}.",
        "Back from yoga class {when} and I feel great, {aside}.",
        "I just finished a yoga class, {aside}.",
        "I squeezed in a yoga class {when}: {aside}.",
        "I showed up for yoga {when}, {aside}.",
    ], [
        "Did the full vinyasa flow at my studio {when}, {aside}.",
        "I stretched my way through a yoga session {when}, {aside}.",
        "Downward dogs galore: I attended yoga {when}, {aside}.",
        "Yoga happened for me {when}, {aside}.",
        "I practised yoga with the group {when}, {aside}.",
    ]),
    # ------------------------------------------------------------------ count_haircut
    "haircut_q": _g([
        "How many haircuts did I get?",
        "How many times did I get my hair cut?",
        "Remind me how many times I've been to the barber.",
        "Quick question: how many haircuts have I had?",
        "Do you know how often I got a haircut?",
        "What's the number of haircuts I've gotten?",
        "Any idea how many trips to the barber I made?",
        "Can you count how many times I had my hair trimmed?",
        "How often did I go to the hairdresser?",
        "Tell me how many haircuts I've had in total.",
    ], [
        "Salon visits for a cut: what's my count?",
        "I've lost track of my trims, how many have there been?",
        "Give me the tally of times someone cut my hair.",
        "On how many occasions did I sit in the barber's chair?",
        "Number of times my hair got cut, please?",
    ]),
    "haircut_pos": _g([
        "I got a haircut {when}, {aside}.",
        "Finally got my hair cut {when}, {aside}.",
        "I went to the barber {when}, {aside}.",
        "I had my hair trimmed {when}, {aside}.",
        "My barber appointment was {when}, {aside}.",
        "I got a trim at the salon {when}, {aside}.",
        "I'm just back from the barber, {aside}.",
        "I sat in the barber's chair {when}, {aside}.",
        "Sporting a fresh haircut I got {when}, {aside}.",
        "I let the hairdresser take a bit off {when}, {aside}.",
    ], [
        "The clippers came out for me {when} at the barbershop, {aside}.",
        "My hair got chopped {when}, {aside}.",
        "I walked out of the salon with a new cut {when}, {aside}.",
        "I finally dealt with my shaggy hair {when}: a proper cut, {aside}.",
        "Hair trim done {when} at my barbershop, {aside}.",
    ]),
    # ------------------------------------------------------------------ meet_friend
    "meet_q": _g([
        "How many times did I meet {friend} for {act}?",
        "How often did {friend} and I get together for {act}?",
        "Remind me how many times I've met up with {friend} for {act}.",
        "Quick question: how many times have I joined {friend} for {act}?",
        "Do you know how many times {friend} and I met for {act}?",
        "What's the count of my meetups with {friend} for {act}?",
        "Any idea how many times I saw {friend} for {act}?",
        "Can you count how often I met {friend} for {act}?",
        "How many times was I out with {friend} for {act}?",
        "{friend} and I have met for {act} how many times now?",
    ], [
        "On how many occasions have {friend} and I linked up for {act}?",
        "Any clue how often {friend} joined me for {act}?",
        "Times I hung out with {friend} doing {act}: what's the number?",
        "I'm curious how many {friend} catch-ups involved {act}.",
        "What's the tally when you count each time {friend} and I went out for {act}?",
    ]),
    "meet_pos": _g([
        "I met {friend} for {act} {when}, {aside}.",
        "I caught up with {friend} over {act} {when}, {aside}.",
        "{friend} and I got together for {act} {when}, {aside}.",
        "I saw {friend} {when} for {act}, {aside}.",
        "{friend} invited me for {act} {when}, so I went along; {aside}.",
        "Met up with {friend} {when} and we did {act}; {aside}.",
        "{friend} dragged me out for {act} {when}, {aside}.",
        "I spent a good while with {friend} {when}: {act}, {aside}.",
        "I finally got a proper catch-up with {friend}: {act} {when}, {aside}.",
        "{friend} and me: {act}, {when}, {aside}.",
    ], [
        "{friend} came by {when} and we headed out for {act} together; {aside}.",
        "{friend} and I finally did {act} together {when}, {aside}.",
        "Such a treat to see {friend}: we did {act} together {when}, {aside}.",
        "It had been too long, so {when} {friend} and I made time for {act}; {aside}.",
        "{friend} joined me {when} for {act} and it was great; {aside}.",
    ]),
    "meet_plan": _g([
        "I'm meeting {friend} for {act} next week.",
        "{friend} and I plan to meet for {act} soon.",
        "Going to see {friend} for {act} at some point, nothing booked.",
        "I should set up {act} with {friend} sometime.",
    ], [
        "Penciled in {act} with {friend} for later this month.",
        "{friend} wants to get together for {act}, we'll see when.",
        "Hoping to catch {friend} for {act} once things calm down.",
        "Upcoming: {act} with {friend}, date to be decided.",
    ]),
    "meet_cancel": _g([
        "I was supposed to meet {friend} for {act} {when} but it got cancelled.",
        "My plans to meet {friend} for {act} {when} got called off.",
        "{friend} bailed on {act} {when}, so we didn't meet.",
        "I had to cancel {act} with {friend} {when}, work ran late.",
    ], [
        "Didn't end up seeing {friend} {when} for {act}, it fell through.",
        "{friend} texted {when} to skip {act}, so that never happened.",
        "I stood {friend} up for {act} {when}, felt bad.",
        "We were meant to do {act} {when}, {friend} and I, but it got rained out.",
    ]),
    "meet_rel": _g([
        "My {rel} met {friend} for {act} {when}.",
        "My {rel} and {friend} got together for {act} {when}, without me.",
        "Apparently {friend} joined my {rel} for {act} {when}.",
        "My {rel} saw {friend} {when} for {act}; I wasn't there.",
    ], [
        "{friend} and my {rel} hung out for {act} {when} while I was at work.",
        "{friend} did {act} with my {rel} {when}, I stayed home.",
        "Funny, my {rel} bumped into {friend} and they ended up doing {act} {when}.",
        "Without me, {friend} took my {rel} out for {act} {when}.",
    ]),
    # ------------------------------------------------------------------ date_adopt
    "adopt_q": _g([
        "On what date did I adopt {pet}?",
        "What date did we [bring|take] {pet} home?",
        "Remind me which day I adopted {pet}.",
        "Quick question: what was the date {pet} joined us?",
        "Do you know the exact date I adopted {pet}?",
        "What's {pet}'s adoption date?",
        "Any idea on which date {pet} came home with me?",
        "Can you tell me the day we got {pet}?",
        "{pet}'s gotcha day, what date was it?",
        "Which date did {pet} become part of the family?",
    ], [
        "For {pet}'s vet paperwork I need the date of adoption, do you have it?",
        "Exactly when did {pet} move in with us? Give me the date.",
        "What day was it that {pet} officially became ours?",
        "I forget the date I got {pet}. Help?",
        "The day {pet} arrived at our home: which date was that?",
    ]),
    "adopt_pos": _g([
        "We adopted {pet} {when}! A {breed} with way too much energy.",
        "I adopted {pet} {when}, a little {breed} from the shelter.",
        "Say hello to {pet}, the {breed} we adopted {when}!",
        "It's official, {pet} came home with us {when}.",
        "Signed the adoption papers for {pet} {when}, a sweet {breed}.",
        "{pet} is ours! We picked up the {breed} from the rescue {when}.",
        "Meet {pet}, our new {breed}, adopted {when}.",
        "I finally adopted a dog {when}, a {breed} named {pet}.",
        "Brought home {pet} {when}, a {breed} who already owns the couch.",
        "Our family got bigger {when}: we adopted {pet}.",
    ], [
        "Paperwork done and leash clipped on, {pet} became our dog {when}.",
        "The shelter let us take {pet} home {when}, and the {breed} hasn't stopped sniffing everything.",
        "New family member alert: {pet}, a {breed}, officially joined us {when}.",
        "Guess who has a dog? Me! {pet} the {breed} moved in {when}.",
        "{pet} is officially adopted, we made it happen {when}.",
    ]),
    "adopt_think": _g([
        "I'm thinking about adopting a dog, maybe a {breed}.",
        "Been reading up on {breed} dogs, tempted to adopt one.",
        "Would a {breed} suit a small apartment? Considering it.",
        "Adopting a {breed} is on my mind lately.",
    ], [
        "Scrolling rescue listings for a {breed}, just looking.",
        "Should I get a {breed} someday? Debating.",
        "My heart says {breed}, my landlord says no pets, so nothing yet.",
        "Daydreaming about a {breed} of my own.",
    ]),
    "adopt_shelter": _g([
        "We visited the shelter and met a {breed} puppy. Not decided yet.",
        "Spent an hour at the shelter with a {breed}, still thinking.",
        "The rescue had a {breed} that stole my heart, but we're not ready.",
        "Met a sweet {breed} at the adoption event, we'll see.",
    ], [
        "Walked through the kennels, a {breed} caught my eye, no commitment.",
        "Filled out an inquiry about a {breed} at the rescue, nothing final.",
        "Petted a shy {breed} at the pound, I'm torn.",
        "There's a {breed} waiting for a home; we haven't decided.",
    ]),
    "adopt_chewed": _g([
        "{pet} chewed through my charger cable. Classic.",
        "{pet} destroyed a slipper, the little menace.",
        "Came home to find {pet} had eaten a sock.",
        "{pet} has discovered the trash can, send help.",
    ], [
        "RIP my headphones, courtesy of {pet}.",
        "{pet}'s latest crime: the couch cushion.",
        "Teething update: {pet} gnawed the table leg.",
        "Caught {pet} red-handed with my shoe.",
    ]),
    "adopt_neighbor": _g([
        "My neighbor adopted a cat named {other} {when}.",
        "The people next door got a kitten called {other} {when}.",
        "Our neighbor brought home a rescue dog, {other}, {when}.",
        "Next door adopted {other} {when}, a tiny cat.",
    ], [
        "Say hi to {other}, the cat my neighbor took in {when}.",
        "My neighbor's household grew {when}: a kitten named {other}.",
        "{other} is the name of the stray my neighbor took from the shelter {when}.",
        "The woman upstairs adopted a kitty, {other}, {when}.",
    ]),
    "adopt_rel": _g([
        "My {rel} adopted a puppy called {other} {when}.",
        "My {rel} brought home a dog named {other} {when}.",
        "My {rel} has a new puppy, {other}, adopted {when}.",
        "My {rel} caved and adopted {other} {when}.",
    ], [
        "Puppy news from my {rel}: {other} joined their household {when}.",
        "{other} is my {rel}'s new dog, picked up {when}.",
        "My {rel} got {other} from a rescue {when}.",
        "Congrats to my {rel} on taking in {other} {when}.",
    ]),
    "adopt_settled": _g([
        "{pet} has been with us for a while now and finally sleeps through the night.",
        "{pet} is settling in nicely.",
        "{pet} knows the house rules now, mostly.",
        "{pet} has claimed the sunny spot on the couch.",
    ], [
        "Life with {pet} has found a rhythm.",
        "{pet} finally stopped crying at bedtime.",
        "Can't imagine the place without {pet} anymore.",
        "{pet} is so at home here it's ridiculous.",
    ]),
    # ------------------------------------------------------------------ date_race
    "race_q": _g([
        "On what date did I run the {race}?",
        "I need the date for my {race} run, can you find it?",
        "Remind me which day I ran the {race}.",
        "Quick question: what date was my {race}?",
        "Do you know the date I did the {race}?",
        "What's the date I finished the {race}?",
        "Any idea which date I completed the {race}?",
        "Can you tell me the day I raced the {race}?",
        "The {race}: on which date did I run it?",
        "Which date did I cross the finish line at the {race}?",
    ], [
        "For my running log I need the exact date of my {race}, what was it?",
        "What day was it that I took part in the {race}?",
        "I forget the date of the {race} I ran. Any help?",
        "Date check: the {race} I raced in, which day?",
        "When was I out there running the {race}? Give me the date.",
    ]),
    "race_pos": _g([
        "I ran the {race} {when}! Finished in {finish}.",
        "Just ran the {race} {when}, {aside}.",
        "Crossed the finish line of the {race} {when} in {finish}.",
        "Done! I completed the {race} {when}, {aside}.",
        "My {race} was {when}: {finish} on the clock, {aside}.",
        "I raced the {race} {when} and finished, {aside}.",
        "Medal in hand: the {race} is done, I ran it {when}.",
        "Finished the {race} {when} with a time of {finish}.",
        "The {race} happened for me {when}, {aside}.",
        "I took on the {race} {when}, {finish} chip time.",
    ], [
        "{finish} was my official time at the {race}, which I ran {when}.",
        "All the training paid off: {when} I got through the whole {race}, {aside}.",
        "Post-race report: the {race}, done {when}, {aside}.",
        "My legs carried me across the {race} finish {when}, {aside}.",
        "Pinned on a bib {when} and made it through the {race} in one piece, {aside}.",
    ]),
    "race_signup": _g([
        "I signed up for the {race}. No turning back now.",
        "Registered for the {race}, what have I done.",
        "Entry fee for the {race} is paid.",
        "I'm officially on the start list for the {race}.",
    ], [
        "Clicked submit on my {race} registration.",
        "Committed: the {race} is on my calendar.",
        "My bib number for the {race} arrived by email.",
        "Put my name down for the {race}, gulp.",
    ]),
    "race_training": _g([
        "Training for the {race} is going okay, long runs are getting easier.",
        "Did a long run to prep for the {race}.",
        "My {race} training plan is brutal.",
        "Getting my miles in for the {race}.",
    ], [
        "Tempo workout done, the {race} prep continues.",
        "Building up mileage ahead of the {race}.",
        "Foam rolling after another practice session for the {race}.",
        "Still a long way from the {race}, legs feel heavy.",
    ]),
    "race_rel": _g([
        "My {rel} ran the {race} last year and wants to do it again.",
        "My {rel} has done the {race} twice.",
        "My {rel} wants to try the {race} someday.",
        "My {rel} finished the {race} years ago.",
    ], [
        "The {race} was my {rel}'s first big race, long before mine.",
        "My {rel} swears the {race} course is hilly, having run it before.",
        "Back in the day, my {rel} won an age group at the {race}.",
        "My {rel} cheered at the {race} once and now wants to enter.",
    ]),
    "race_sore": _g([
        "Still sore thinking about the {race}. Never again (until next year).",
        "My calves still remember the {race}.",
        "Looking at {race} photos, I look terrible.",
        "The {race} medal is hanging on my wall now.",
    ], [
        "Recovery from the {race} is slow going.",
        "Bought a frame for my {race} bib.",
        "People keep asking about the {race}, I never shut up about it.",
        "Stairs are still my enemy after the {race}.",
    ]),
    # ------------------------------------------------------------------ sum_bike
    "bike_q": _g([
        "How much did I spend on bike repairs in total?",
        "What's the total I've paid for bike repairs?",
        "Remind me how much my bike repairs have cost me altogether.",
        "Quick question: how much have I spent at the bike shop in total?",
        "Do you know my total bike repair spending?",
        "Add up everything I paid for bike repairs, please.",
        "Any idea what I've shelled out on bike maintenance overall?",
        "Can you sum my bike repair costs?",
        "How much money has gone into fixing my bike, all told?",
        "Bike repairs: what's my running total?",
    ], [
        "Tally the cash I've sunk into keeping my bicycle rolling.",
        "If you total every bicycle shop bill of mine, what do you get?",
        "What did servicing my bicycle cost me, summed up?",
        "Give me the grand total for my cycling repairs.",
        "How many dollars have I put toward my bicycle's upkeep so far?",
    ]),
    "bike_paid": _g([
        "Paid ${amt} at the bike shop for {item}.",
        "The bike shop charged me ${amt} for {item}, ouch.",
        "Spent ${amt} on bike repairs ({item}).",
        "My bike needed {item}: ${amt}.",
        "Dropped {amt} bucks on {item} at the bike shop.",
        "Bike repair bill: ${amt} for {item}.",
        "I handed over {amt} dollars for {item} on my bike.",
        "Got {item} done on my bike, ${amt} all in.",
        "The mechanic fixed my bike ({item}) and I paid ${amt}.",
        "My wallet is ${amt} lighter after {item} at the bike shop.",
    ], [
        "Receipt from the cycle shop says ${amt}, that was for {item}.",
        "Forked out {amt} dollars so my bicycle could get {item}.",
        "Bicycle maintenance, {item}: cost {amt} bucks, settled on the spot.",
        "The wrench guys took ${amt} off me for {item}.",
        "Settled up at the cycle shop for {item}, ${amt} gone.",
    ]),
    # ------------------------------------------------------------------ sum_taxi
    "taxi_q": _g([
        "How much did I spend on taxis in total?",
        "What's the total I've paid for taxi rides?",
        "Remind me how much my taxis have cost altogether.",
        "Quick question: how much have I spent on taxi fares in total?",
        "Do you know my total taxi spending?",
        "Add up everything I paid for taxis, please.",
        "Any idea what I've shelled out on taxis overall?",
        "Can you sum my taxi fares?",
        "How much money have I put into taxi rides, all told?",
        "Taxis: what's my running total?",
    ], [
        "Tally the fares from every cab I've hailed.",
        "If you total my cab rides, what's the damage?",
        "What did getting driven around by cabbies cost me, summed up?",
        "Give me the grand total for my cab fares.",
        "How many dollars have I blown on cabs so far?",
    ]),
    "taxi_paid": _g([
        "Paid ${amt} for a taxi to {item}.",
        "The taxi to {item} cost me ${amt}.",
        "Took a taxi to {item}, ${amt} with the tip.",
        "${amt} taxi fare to {item}, paid by card.",
        "Spent {amt} bucks on a taxi to {item}.",
        "I grabbed a taxi to {item} and paid ${amt}.",
        "The fare to {item} came to ${amt}, which I paid.",
        "Had to take a taxi to {item}, {amt} dollars.",
        "My taxi ride to {item} set me back ${amt}.",
        "I paid the driver ${amt} for the trip to {item}.",
    ], [
        "Hailed a cab for {item} and handed over {amt} dollars.",
        "Meter read ${amt} by the time we pulled up at {item}, paid it.",
        "{amt} bucks later, the cab dropped me at {item}.",
        "Cab fare, {item} run: ${amt} out of my pocket.",
        "The cabbie got ${amt} from me for the drive out to {item}.",
    ]),
    # ------------------------------------------------------------------ sum_groceries
    "grocery_q": _g([
        "How much did I spend on groceries in total?",
        "What's the total I've paid for groceries?",
        "Remind me how much my grocery shopping has cost altogether.",
        "Quick question: how much have I spent on food shopping in total?",
        "Do you know my total grocery spending?",
        "Add up everything I paid for groceries, please.",
        "Any idea what I've shelled out on groceries overall?",
        "Can you sum my grocery bills?",
        "How much money have I put into groceries, all told?",
        "Groceries: what's my running total?",
    ], [
        "Tally the receipts from all my supermarket runs.",
        "If you total my food shopping trips, what's the damage?",
        "What did stocking my fridge cost me, summed up?",
        "Give me the grand total for my grocery hauls.",
        "How many dollars have I dropped at the checkout so far?",
    ]),
    "grocery_paid": _g([
        "Spent ${amt} on groceries at {item}.",
        "The grocery run at {item} came to ${amt}.",
        "Paid ${amt} for groceries at {item}.",
        "Grocery bill at {item}: ${amt}.",
        "Dropped {amt} bucks on groceries at {item}.",
        "I did the big shop at {item}, ${amt}.",
        "Filled a cart at {item} and paid ${amt}.",
        "Groceries from {item} cost me {amt} dollars.",
        "I stocked up on groceries at {item}, ${amt} at the register.",
        "My receipt from {item} says ${amt} for groceries.",
    ], [
        "Checkout at {item} rang up to ${amt}, mostly produce.",
        "Food haul from {item}: {amt} dollars, fridge is full.",
        "Handed the cashier at {item} ${amt} for a bag of essentials.",
        "{amt} bucks gone on food shopping at {item}.",
        "Restocked the pantry at {item}, set me back ${amt}.",
    ]),
}



def _variant(name: str, frames: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """One variant's frames per key (`GRAMMARS[key][name]`); `frames`, a development set written
    apart, are first added under that name."""
    for key, fs in (frames or {}).items():
        GRAMMARS[key][name] = fs
    return {k: list(v[name]) for k, v in GRAMMARS.items()}


WIDE_TRAIN: dict[str, list[str]] = _variant("train")
WIDE_TEST: dict[str, list[str]] = _variant("test")

# ---------------------------------------------------------------------------------------------- wide-dev
# A DEVELOPMENT paraphrase set (train role): 8 frames per question / evidence key, 3 per near-miss key,
# written apart from both other variants (no word 4-gram shared with any expansion of a "train" or a
# "test" frame of the same key; tests/test_grammars.py). For improving a program writer on wordings it
# was not written against, without looking at the "test" frames.
_DEV: dict[str, list[str]] = {
    # ------------------------------------------------------------------ update_city
    "city_q": [
        "Where am I based [nowadays|these days]?",
        "Which city should I put down as my home address right now?",
        "Sorry if I asked before: what's the city I currently call home?",
        "Current city for me, what is it again?",
        "If a form asked where I reside today, which city would I write?",
        "Tell me where I'm living at the moment[, please|].",
        "Which metro area is my home base [these days|nowadays]?",
        "After all the back and forth, what city do I actually live in now?",
    ],
    "city_move": [
        "Van unloaded, lease signed, keys in hand: {x} is where I'm based going forward.",
        "Plot twist: I up and left for {x}, and the move is complete.",
        "New chapter: I packed up everything and relocated to {x}.",
        "{x} is my new home base, moved here over the weekend.",
        "Changed cities! Unpacked the last crate in {x} and I'm loving my [new street|block].",
        "Moving day is over and my address is {x} [now|from here on].",
        "Keys handed over, I moved into my {x} apartment; [cardboard everywhere|no sofa yet].",
        "Ok so the big relocation happened: I'm living in {x}.",
    ],
    "city_restate": [
        "The bakery on my corner in {x} knows my order by heart, that's how settled I am.",
        "{x} winters are rough but I wouldn't live anywhere else.",
        "Settled and happy here in {x}, [no regrets|zero regrets].",
        "Every time I walk around {x} I'm glad I live here.",
        "Day to day, {x} life suits me: [short commute|good bike lanes], friendly faces.",
        "Still very much a {x} person, home is here.",
        "Can't believe how quickly {x} started feeling like my town.",
        "Local life update from {x}: found a great gym near my place.",
    ],
    "city_live": [
        "Here in {x} it's been raining nonstop, typical.",
        "Since I'm a {x} local, I know the best coffee spots.",
        "Rent in {x} is brutal, and I'm the one paying it.",
    ],
    "city_neighbor": [
        "Across the hall, our neighbors loaded a truck headed for {x}.",
        "My downstairs neighbor is packing up for {x}.",
        "The house next door sits empty since its owners took off for {x}.",
    ],
    "city_maybe": [
        "Retiring to {x} would be lovely, though that's decades off.",
        "{x} would be my pick if remote work let me live anywhere.",
        "Maybe someday {x}, who knows, but I'm staying put for now.",
    ],
    "city_visit": [
        "Packing a carry-on because {x} is on the itinerary, just a brief trip.",
        "Client visit takes me to {x} briefly, home by Friday.",
        "Three nights in a {x} hotel, then straight home.",
    ],
    "city_past": [
        "I used to rent a place in {x}, long before all this.",
        "As a kid I spent summers living in {x}.",
        "Way back, {x} was where I had my first apartment.",
    ],
    "city_friend": [
        "{f} texted that they've settled in {x} now.",
        "Helped {f} pack for the move to {x}.",
        "Turns out {f} rents a loft in {x}, who knew.",
    ],
    # ------------------------------------------------------------------ update_employer
    "job_q": [
        "Whose logo is on my work badge [at the moment|nowadays]?",
        "What company am I with at the moment?",
        "Tell me the name of my current employer.",
        "Which organization am I employed by right now?",
        "Current workplace: where is it[ again|], if you remember?",
        "If someone asked where I work today, what should I say?",
        "Whose team am I on now, company-wise?",
        "What's my employer as of today?",
    ],
    "job_start": [
        "Signed the contract and started at {x}, [orientation was long|HR paperwork all day].",
        "New job alert: {x} hired me and I've begun working there.",
        "{x} is my employer now, week one went fine.",
        "After a long search I landed a position at {x} and started this week.",
        "Desk assigned and badge photo taken, {x} is officially my workplace.",
        "My onboarding at {x} began, so I guess I work there now.",
        "Said yes to {x} and walked in as a new hire.",
        "Work news: I'm a {x} person now, started on the [data|design] team.",
    ],
    "job_join": [
        "Jumped ship to {x}, so that's my new workplace.",
        "Resignation letter sent, exit interview survived, and {x} onboarded me.",
        "I'm now part of the team at {x}.",
        "Yet another job hop: {x} brought me on board.",
        "{x} made me an offer I couldn't refuse, and I'm already working there.",
        "Wrapped up my old gig and came aboard at {x}.",
        "Heads up: different company, same me, I'm on the {x} payroll [now|these days].",
        "First paycheck from {x} just landed, the new job is real.",
    ],
    "job_now": [
        "Crazy quarter at {x}, I'm drowning in tickets.",
        "Quarterly planning at {x} ate my whole week.",
        "Deploy freezes at {x} make Thursdays tense for me.",
    ],
    "job_interview": [
        "{x} asked me to do a case study, I might pass.",
        "Spoke with a hiring manager at {x}, lukewarm on it.",
        "There's an offer from {x} on the table but I'm leaning no.",
    ],
    "job_friend": [
        "{f} landed a gig at {x}, so proud of them.",
        "Celebrating with {f} tonight, {x} took them on.",
        "My buddy {f} is working for {x} now.",
    ],
    "job_recruiter": [
        "A headhunter keeps pushing {x} on me.",
        "{x} HR cold-called me, I let it go to voicemail.",
        "Another recruiting email from {x} went straight to archive.",
    ],
    "job_rel": [
        "My {rel} retired from {x} ages ago.",
        "Fun fact: {x} gave my {rel} an internship decades back.",
        "My {rel} still has an old {x} mug from working there.",
    ],
    # ------------------------------------------------------------------ relative_city
    "rel_q": [
        "What's the latest on my {rel}'s city [these days|nowadays]?",
        "At present, in what city would I find my {rel}?",
        "Tell me my {rel}'s home city as of now.",
        "Which town does my {rel} currently live in?",
        "Where has my {rel} ended up these days?",
        "If I wanted to drop by my {rel}'s place today, which city would I go to?",
        "Current city of my {rel}, do you have it?",
        "Remind me: my {rel} lives in what city [these days|right now]?",
    ],
    "rel_moved": [
        "My {rel} swapped cities and now calls {x} home.",
        "Big change for my {rel}: a new apartment in {x}, moved in over the weekend.",
        "{x} is where my {rel} lives now, the move wrapped up.",
        "Drove a rental truck across the state so my {rel} could relocate to {x}.",
        "My {rel} got a transfer and moved out to {x}.",
        "News from the family: my {rel} has a new address in {x} now.",
        "My {rel} finally made {x} their home, the move is done.",
        "Weekend was all boxes and tape: my {rel} moved across the country to {x}.",
    ],
    "rel_lives": [
        "My {rel} has lived in {x} forever.",
        "Time zones are a pain since my {rel} is over in {x}.",
        "My {rel}'s house in {x} has a huge garden.",
    ],
    "rel_visit": [
        "Postcards incoming: my {rel} went touring around {x} this week.",
        "Holiday photos keep arriving from my {rel}, who is in {x} on vacation.",
        "A quick getaway: my {rel} flies to {x} and returns before the weekend.",
    ],
    "rel_maybe": [
        "Retirement fantasies for my {rel} all seem to involve {x}.",
        "I bet my {rel} lands in {x} eventually, maybe.",
        "My {rel} has no real plans, but {x} keeps coming up.",
    ],
    "rel_friend": [
        "An old pal of my {rel} settled in {x}.",
        "Apparently the old college roommate of my {rel} found work in {x}.",
        "Turns out a work pal of my {rel} ended up settling in {x}.",
    ],
    "rel_grew": [
        "Born and bred in {x}, that's my {rel}.",
        "Childhood summers in {x} shaped my {rel}.",
        "My {rel}'s roots are in {x}, the whole family is from there.",
    ],
    # ------------------------------------------------------------------ count_<activity>
    "dentist_q": [
        "How many dental checkups are behind me so far?",
        "Give me the total of my dentist visits.",
        "Lost count of my teeth cleanings, what's the figure?",
        "Quick tally needed on my dentist visits: what is it up to?",
        "How often was I at the dentist's office?",
        "Number of hygienist appointments I went to?",
        "Could you work out the number of dentist appointments I showed up for?",
        "Exactly how many trips did I make to see my dentist?",
    ],
    "dentist_pos": [
        "Dental cleaning done {when}, my teeth feel [so smooth|squeaky clean]; {aside}.",
        "Spent a good while under the hygienist's lamp {when}, my gums complained; {aside}.",
        "Ugh, dentist {when}. I was in and out fast, {aside}.",
        "I kept that dental booking {when} after all, {aside}.",
        "Had the dentist poke around my mouth {when}, {aside}.",
        "Dentist polished my teeth properly {when}; {aside}.",
        "Checked the dentist off my list {when}, {aside}.",
        "Went in for my dental exam {when} and left with a [new toothbrush|sticker], {aside}.",
    ],
    "yoga_q": [
        "Across everything I've told you, how many yoga workouts did I do?",
        "Give me a count of my yoga classes.",
        "What's my yoga attendance total?",
        "Yoga check, tally it up for me: classes attended?",
        "Can I get a number on how often I attended yoga?",
        "I'd like the number of times I practiced yoga at a studio.",
        "Out of all my vinyasa sessions, what's the count?",
        "Have you kept count of my vinyasa classes? What's the number?",
    ],
    "yoga_pos": [
        "Sweated through a hot yoga class {when}, I'm still glowing; {aside}.",
        "Yoga {when} was tough: I held boat pose forever, {aside}.",
        "I joined a vinyasa flow {when} with my favorite instructor, {aside}.",
        "Namaste from me: a full hour of yoga got done {when}; {aside}.",
        "Sun salutations, pigeon pose, the works: I did yoga {when}, {aside}.",
        "My mat got some use {when} at yoga, {aside}.",
        "I stretched, breathed and wobbled through yoga {when}; {aside}.",
        "Yoga {when}: I was the stiffest person in the room, {aside}.",
    ],
    "haircut_q": [
        "What's the count on my haircuts?",
        "What's the tally of trims I've sat through?",
        "Number of salon visits I've made, please?",
        "Barber trips I took: give me the total.",
        "How often has someone taken clippers to my head?",
        "Tally up my haircuts for me.",
        "Can you figure out how many cuts I've had at the salon?",
        "Haircut count, please: how many have I had?",
    ],
    "haircut_pos": [
        "I treated myself to a fresh fade {when} at my barber's, {aside}.",
        "Hair is shorter now, I got it chopped {when}; {aside}.",
        "The salon took care of my hair {when}, {aside}.",
        "Clippers buzzed over my head {when}, {aside}.",
        "My haircut happened {when}, {aside}.",
        "I went under the salon scissors {when}: {aside}.",
        "I stopped by the hairdresser {when} for a quick cut, {aside}.",
        "New look! My hair got trimmed {when}, {aside}.",
    ],
    # ------------------------------------------------------------------ meet_friend
    "meet_q": [
        "Number check: {act} with {friend}, how many outings did I have?",
        "Count up how frequently {friend} got me out for {act}.",
        "{friend} plus me plus {act}: what's the tally?",
        "Tally of my {act} outings with {friend}, please?",
        "Since we started chatting, on how many days did {friend} keep me company for {act}?",
        "Looking back, what's my count of {act} meetups with {friend}?",
        "How often did I end up seeing {friend} for {act}?",
        "Me and {friend} doing {act}: number of times so far?",
    ],
    "meet_pos": [
        "Had a great time with {friend} {when}, we went for {act}; {aside}.",
        "{friend} picked me up {when} and off we went for {act}. Verdict: {aside}.",
        "I squeezed in {act} alongside {friend} {when} and honestly, {aside}.",
        "{friend} talked me into {act} {when}, {aside}.",
        "Lovely surprise: {friend} rang me {when}, {act} followed, and {aside}.",
        "I hung out with {friend} for a bit {when}, mostly {act}; {aside}.",
        "Quality time with {friend} {when}, mostly spent on {act}. I'd say {aside}.",
        "{friend} texted me {when} and we ended up doing {act}, {aside}.",
    ],
    "meet_plan": [
        "Penciled {act} into the calendar with {friend}, date TBD.",
        "Hoping to do {act} with {friend} soon.",
        "{friend} keeps saying we should do {act} sometime.",
    ],
    "meet_cancel": [
        "Rain ruined {act} with {friend}, so we bailed {when}.",
        "Waited ages {when} but {friend} didn't show, so no {act}.",
        "{friend} and I were set for {act} {when} until it fell through.",
    ],
    "meet_rel": [
        "While I stayed home {when}, my {rel} was out with {friend} for {act}.",
        "I wasn't invited, but my {rel} got {act} in with {friend} {when}.",
        "Heard my {rel} had {act} with {friend} {when}.",
    ],
    # ------------------------------------------------------------------ date_adopt
    "adopt_q": [
        "When exactly did {pet} come to live with us?",
        "What day was {pet} officially adopted?",
        "{pet} has been with me since when? I need the exact date.",
        "Need {pet}'s adoption day for a form; when was it?",
        "The day I brought {pet} home: can you pin it down?",
        "Help me out: on which day did {pet} become mine?",
        "For the vet forms: {pet}'s adoption happened on what date?",
        "Which calendar day marks {pet}'s arrival in our home?",
    ],
    "adopt_pos": [
        "{pet} is officially part of the family as of {when}, a [goofy|sleepy] {breed}.",
        "Adoption finalized {when}: {pet} the {breed} lives with me now.",
        "We drove {pet} home {when}; the {breed} snoozed in the back seat.",
        "Paperwork done, fees paid, and {pet} came home {when}.",
        "{pet}, our {breed}, joined the household {when}.",
        "I said yes to {pet} at the rescue {when}, and this {breed} has huge ears.",
        "New roommate alert: {pet} the {breed} is ours, adoption went through {when}.",
        "Got approved and took {pet} home {when}!",
    ],
    "adopt_think": [
        "Debating whether a {breed} fits our lifestyle.",
        "Rescue websites are my new hobby, and I keep daydreaming of a {breed}.",
        "Should we get a {breed}? Just thinking out loud.",
    ],
    "adopt_shelter": [
        "A {breed} licked my hand at the adoption center; still thinking.",
        "Torn between saying yes and waiting on a {breed} we met.",
        "Asked the rescue questions about their {breed}, nothing final.",
    ],
    "adopt_chewed": [
        "{pet} ate half my homework. Literally.",
        "Caught {pet} gnawing on the table leg again.",
        "{pet} has shredded the couch cushions, the little gremlin.",
    ],
    "adopt_neighbor": [
        "The upstairs couple got a rescue cat, {other}, {when}.",
        "A tabby named {other} moved in next door {when}.",
        "Next door has a new pup called {other} as of {when}.",
    ],
    "adopt_rel": [
        "My {rel} finally got a dog, {other}, {when}.",
        "Cute news: {other} joined my {rel}'s household {when}.",
        "Went with my {rel} to pick up a rescue named {other} {when}.",
    ],
    "adopt_settled": [
        "No more whining at bedtime, {pet} is calm now.",
        "These days {pet} follows me everywhere.",
        "{pet} learned to sit and stay, proud parent moment.",
    ],
    # ------------------------------------------------------------------ date_race
    "race_q": [
        "When did I do the {race}? Need the date.",
        "Which day was my {race}?",
        "Filling in my running log: which day did the {race} happen for me?",
        "What date should I write down for finishing the {race}?",
        "I forget when the {race} was for me; what's the date?",
        "Dig up the day I laced up for the {race}, please.",
        "{race} question: when exactly did I take part?",
        "On which day did I pin on a bib for the {race}?",
    ],
    "race_pos": [
        "Conquered {when}: the {race}, and {aside}.",
        "{race} done and dusted {when}, {finish} on my watch.",
        "Somehow my legs got me through the {race}, all of it, {when}; {aside}.",
        "Ran every single mile {when} of the {race}, clocking {finish}.",
        "I got my {race} medal {when}, {finish} officially.",
        "{race}: survived it {when}, {aside}.",
        "Toed the line {when} at the {race}, then came in at {finish}.",
        "Personal milestone unlocked: {race} finisher as of {when}, {aside}.",
    ],
    "race_signup": [
        "{race} entry confirmed, gulp.",
        "Circled the {race} on the calendar and paid up.",
        "Race packet pickup info for the {race} landed in my inbox, bib and all.",
    ],
    "race_training": [
        "Tempo runs for the {race} are kicking my butt.",
        "Weekly mileage creeping up because the {race} looms.",
        "Doing hill repeats to prep, the {race} is no joke.",
    ],
    "race_rel": [
        "My {rel} is thinking about doing the {race} with me.",
        "Bragging rights belong to my {rel}, who did the {race} once.",
        "The {race} is my {rel}'s favorite event.",
    ],
    "race_sore": [
        "My knees are still mad at me about the {race}.",
        "The {race} t-shirt is my new pajama top.",
        "Scrolled through the {race} results page again, still proud.",
    ],
    # ------------------------------------------------------------------ sums
    "bike_q": [
        "What have bike repairs cost me so far?",
        "Tally my bike shop bills for me.",
        "Across all the fixes, how much did my bike cost me in repairs overall?",
        "I'd like a grand total for the money I've put into bike fixes.",
        "My bike maintenance spending, summed up: what's the figure?",
        "How much has the bike shop taken off me altogether?",
        "Total cost of keeping my bike on the road?",
        "Can you add up what I paid the mechanic for my bike?",
    ],
    "bike_paid": [
        "Forked out ${amt} so the mechanic would do {item}.",
        "Cash on the counter, {amt} dollars, and the shop sorted {item} for me.",
        "The repair for my bike ({item}) ran ${amt}.",
        "${amt} poorer, but my bike has {item}.",
        "Bike's back from the shop after {item}; that was {amt} bucks.",
        "Invoice from the bike mechanic: {item}, ${amt}.",
        "The cycle shop did {item} and I coughed up ${amt}.",
        "My ride needed {item} and the repair came to ${amt}.",
    ],
    "taxi_q": [
        "What's my cab spending come to so far?",
        "Tally up my cab fares, please.",
        "Overall, how much money went on taxi rides for me?",
        "Grand total for cabs and taxis on my tab?",
        "Altogether, what have taxi drivers received from me?",
        "Sum up every cab I've taken: what did it cost me?",
        "What's the overall damage from my cab rides?",
        "Taxi expenses I've racked up: total, please?",
    ],
    "taxi_paid": [
        "Quick hop by cab over to {item}, ugh, ${amt}.",
        "The ride over to {item} cost {amt} bucks by cab.",
        "Hailed a cab to {item}, meter said ${amt}.",
        "Tip included, I paid ${amt} for the cab to {item}.",
        "Jumped in a taxi to get to {item}; that cost me {amt} dollars.",
        "I was running late so I caught a cab to {item}, ${amt}.",
        "Charged ${amt} to my card for a taxi out to {item}.",
        "A cabbie got me to {item} for ${amt}.",
    ],
    "grocery_q": [
        "How much has food shopping cost me overall?",
        "Tally my supermarket receipts for me.",
        "What's my grocery spend come to so far?",
        "Add together every grocery bill I've mentioned: what's the sum?",
        "Total up what I've paid at the supermarket for groceries.",
        "Groceries have eaten how much of my money altogether?",
        "What's my overall outlay on groceries?",
        "Combined, my grocery receipts add up to what?",
    ],
    "grocery_paid": [
        "Supermarket trip at {item}: ${amt}.",
        "Grabbed essentials at {item} and the total was ${amt}.",
        "{amt} dollars at {item} for a week's worth of food.",
        "Went to {item} for groceries, spent ${amt}.",
        "Ouch, {item} took ${amt} off me for groceries.",
        "My card got charged ${amt} at {item} for food.",
        "Shopping at {item} this time: {amt} bucks for groceries.",
        "Loaded up on veggies and basics at {item}, ${amt} in total.",
    ],
}
WIDE_DEV: dict[str, list[str]] = _variant("dev", _DEV)

# ---------------------------------------------------------------------------------------------- wide-dev2
# A SECOND development set (train role, 2026-12-05), written later and by another hand than "wide-dev", in
# plainer everyday chat: 5 frames per question key, 4 per evidence key, 2 per near-miss key, no word
# 4-gram shared with any expansion of a "train", "test" or "dev" frame of the same key (tests/test_grammars.py).
# Like wide-dev it is for the program writer's development, never a test split.
_DEV2: dict[str, list[str]] = {
    # ------------------------------------------------------------------ update_city
    "city_q": [
        "Okay, silly one: my town of residence right now is which?",
        "Visa paperwork wants the city I reside in; which one is it currently?",
        "Where's my apartment these days, city-wise?",
        "Name my home city as it stands now.",
        "A coworker asked my city at present and I blanked. What should I have said?",
    ],
    "city_move": [
        "Officially a resident of {x} now, the movers left an hour ago.",
        "Finished the move; my new place is in {x}.",
        "Bye bye old flat, hi {x}! Moved and unpacked.",
        "We did it: all my stuff is in {x} and this is home [from now on|now].",
    ],
    "city_restate": [
        "Loving my neighborhood here in {x}, it feels like home.",
        "Honestly {x} has been good to me since I settled here.",
        "Walked to work through {x}, still can't get over how nice my city is.",
        "Another great weekend at home in {x}.",
    ],
    "city_live": [
        "Traffic in {x} is awful, my commute took forever.",
        "As someone who lives in {x}, I know every shortcut.",
    ],
    "city_neighbor": [
        "That upstairs neighbor of ours is heading off to {x} for good.",
        "The family next door sold up; {x} is where they went.",
    ],
    "city_maybe": [
        "I'd love to live in {x} someday.",
        "If I ever leave, {x} might be the place.",
    ],
    "city_visit": [
        "Packing for a conference; {x} until Thursday.",
        "Weekend getaway to {x} was fun, back to reality now.",
    ],
    "city_past": [
        "Back in my student days I rented a room in {x}.",
        "Years ago I had a tiny studio in {x}.",
    ],
    "city_friend": [
        "{f} just moved to {x}, I'm going to miss them.",
        "My pal {f} rents a flat over in {x}.",
    ],
    # ------------------------------------------------------------------ update_employer
    "job_q": [
        "Who pays my salary these days?",
        "Which firm do I currently work for?",
        "Company I'm working at right now: what's it called?",
        "Updating my profile: who's my employer at present?",
        "Where do I clock in nowadays?",
    ],
    "job_start": [
        "Big day: started at {x} and met the whole team.",
        "Took the {x} offer and I've started there.",
        "Officially employed by {x}, my badge works and everything.",
        "Kicked off my new role at {x}, lots of setup.",
    ],
    "job_join": [
        "I've joined {x}, senior analyst title and all.",
        "Left my old company; {x} pays my bills now.",
        "Just came on board at {x}, still learning everyone's names.",
        "Employer update: {x} signed me on, and it's going fine.",
    ],
    "job_now": [
        "Long meeting marathon at {x}, my brain is fried.",
        "The coffee machine at {x} broke again, productivity down.",
    ],
    "job_interview": [
        "Got through a phone screen for {x}, not sure how it went.",
        "Second interview at {x} on Thursday, fingers crossed.",
    ],
    "job_friend": [
        "{f} got hired by {x}, good for them.",
        "Lunch with {f}, who works at {x} these days.",
    ],
    "job_recruiter": [
        "Someone recruiting for {x} messaged me out of the blue.",
        "{x} HR sent another role pitch, not interested.",
    ],
    "job_rel": [
        "My {rel} worked at {x} for decades.",
        "My {rel} just got promoted at {x}.",
    ],
    # ------------------------------------------------------------------ relative_city
    "rel_q": [
        "Which city has my {rel} living in it right now?",
        "If I mailed a card to my {rel} today, what city goes on the envelope?",
        "My {rel} has moved around a lot, so where are they currently?",
        "Where's home for my {rel} nowadays?",
        "Which city for my {rel}, as things stand at present?",
    ],
    "rel_moved": [
        "My {rel} has just moved over to {x}.",
        "Helped my {rel} settle into a new flat in {x}; that's their home now.",
        "My {rel} relocated, {x} permanently.",
        "Guess who lives in {x} now? My {rel}, the move is finished.",
    ],
    "rel_lives": [
        "Phone date with my {rel} over in {x} tonight.",
        "My {rel} keeps a house full of plants in {x}.",
    ],
    "rel_visit": [
        "My {rel} is on a short trip over to {x}.",
        "My {rel} is at a wedding in {x}, back soon.",
    ],
    "rel_maybe": [
        "My {rel} might end up moving to {x}, eventually.",
        "My {rel} keeps saying maybe {x} one day.",
    ],
    "rel_friend": [
        "One friend my {rel} has lives in {x}.",
        "My {rel}'s roommate from college is in {x} now.",
    ],
    "rel_grew": [
        "Childhood home for my {rel}: {x}.",
        "Way back when my {rel} was a kid, home was {x}.",
    ],
    # ------------------------------------------------------------------ count_<activity>
    "dentist_q": [
        "How many dentist trips have there been for me?",
        "Count my dental appointments for me.",
        "What's my total number of teeth cleanings?",
        "Dentist count please: how many appointments did I keep?",
        "Dentist visits: what number am I at?",
    ],
    "dentist_pos": [
        "I had my teeth cleaned {when}, {aside}.",
        "My dental checkup got done {when}, so {aside}.",
        "My dental checkup was {when}, {aside}.",
        "Dentist appointment survived {when}, my jaw still aches; {aside}.",
    ],
    "yoga_q": [
        "Yoga sessions on my record: how many?",
        "My yoga streak in numbers: how many classes?",
        "Count the times I rolled out my mat for yoga class.",
        "How often was I on a yoga mat in class?",
        "What number do my yoga classes come to?",
    ],
    "yoga_pos": [
        "Yoga attended {when} by yours truly; I'm sore, {aside}.",
        "I got myself to yoga {when} and {aside}.",
        "Vinyasa class {when} wiped me out, {aside}.",
        "My body thanked me after yoga {when}, {aside}.",
    ],
    "haircut_q": [
        "How many haircuts happened for me?",
        "Barber visits: what's my count?",
        "Count my trips to the hair salon.",
        "What number of trims have I had done?",
        "Total haircuts for me, any idea?",
    ],
    "haircut_pos": [
        "I finally had a barber tame my mop {when} and {aside}.",
        "My barber appointment got done {when}, and {aside}.",
        "My hair got a trim {when} and {aside}.",
        "Salon chair time for me {when}: got it cut short; {aside}.",
    ],
    # ------------------------------------------------------------------ meet_friend
    "meet_q": [
        "Rounds of {act} that {friend} and I did: how many for me?",
        "How often have I done {act} with {friend}?",
        "Count the {act} dates I had with {friend}.",
        "{friend} and {act}: what count did I reach?",
        "What number of {act} sessions did I share with {friend}?",
    ],
    "meet_pos": [
        "{friend} and I had {act} together {when} and {aside}.",
        "I enjoyed {act} {when} in the company of {friend}; {aside}.",
        "{friend} came along to {act} with me {when} and {aside}.",
        "We got some {act} in {when}, {friend} and me, and {aside}.",
    ],
    "meet_plan": [
        "{friend} and I are going to try {act} soon.",
        "Planning {act} with {friend}, no date yet.",
    ],
    "meet_cancel": [
        "{friend} cancelled our {act} {when}.",
        "We called off {act} {when}, {friend} was sick.",
    ],
    "meet_rel": [
        "I was stuck at my desk {when} while my {rel} enjoyed {act} alongside {friend}.",
        "{friend} invited my {rel} to {act} {when}, not me.",
    ],
    # ------------------------------------------------------------------ date_adopt
    "adopt_q": [
        "When was {pet} adopted by me?",
        "The date {pet} moved in with me, what was it?",
        "Gotcha day for {pet}: when was it?",
        "On what day did I get {pet}?",
        "Any idea which day {pet} joined my family?",
    ],
    "adopt_pos": [
        "I officially adopted {pet} {when}; such a sweet {breed}.",
        "Brought {pet} home from the shelter {when}.",
        "Say hi to my {breed} {pet}, who became mine {when}.",
        "{pet} came to stay {when} and claimed the couch straight away.",
    ],
    "adopt_think": [
        "Thinking about getting a {breed}.",
        "Considering a {breed}, but not sure yet.",
    ],
    "adopt_shelter": [
        "Shelter visit: met a {breed}, haven't decided yet.",
        "The rescue has a lovely {breed} I keep visiting; still thinking.",
    ],
    "adopt_chewed": [
        "{pet} chewed up my favorite shoes.",
        "{pet} stole a sock and ran off with it.",
    ],
    "adopt_neighbor": [
        "My neighbor got a puppy named {other} {when}.",
        "Our neighbors have a kitten now, {other}, since {when}.",
    ],
    "adopt_rel": [
        "My {rel} took in a cat called {other} {when}.",
        "My {rel} got a puppy, {other}, {when}.",
    ],
    "adopt_settled": [
        "{pet} no longer wakes me at night.",
        "{pet} finally gets along with the cat.",
    ],
    # ------------------------------------------------------------------ date_race
    "race_q": [
        "When was my run at the {race}?",
        "Which date goes with my {race}?",
        "The {race}: on what day did I race it?",
        "Remind me: the {race}, what day was that for me?",
        "Can you find when I took on the {race}?",
    ],
    "race_pos": [
        "Finished the {race} in {finish}, that was {when}.",
        "Across the line at the {race} {when}; honestly {aside}.",
        "Got through the {race}, which was {when}; {aside}.",
        "{race} in the books {when}, my time was {finish}.",
    ],
    "race_signup": [
        "Name's on the {race} start list, no backing out!",
        "My {race} entry is in.",
    ],
    "race_training": [
        "Long run to train for the {race}, legs are jelly.",
        "This {race} prep is brutal on my legs.",
    ],
    "race_rel": [
        "Years back, my {rel} did the {race}.",
        "My {rel} is keen on the {race} too.",
    ],
    "race_sore": [
        "Still limping from the {race}.",
        "Hung my {race} medal on the wall.",
    ],
    # ------------------------------------------------------------------ sums
    "bike_q": [
        "For repairs on my bike, what's my spend in total?",
        "Add up the money my bike repairs took.",
        "All told, what did getting the bike fixed set me back?",
        "What's the sum of my bicycle repair bills?",
        "So far, how much money have I sunk into bike repairs?",
    ],
    "bike_paid": [
        "Paid ${amt} to have {item} sorted on the bike.",
        "My bike shop bill for {item}: ${amt}.",
        "The bike had to get {item}; {amt} dollars, not cheap.",
        "Got my bike fixed ({item}): ${amt}.",
    ],
    "taxi_q": [
        "Taxis: what's my spend in total?",
        "Add up what I paid for cabs.",
        "All told, what have my taxi rides cost me?",
        "What's the sum of my cab fares so far?",
        "Taxi money overall: what's the figure for me?",
    ],
    "taxi_paid": [
        "Taxi ride out to {item}, ${amt}.",
        "My cab fare to {item} was ${amt}.",
        "Paid {amt} bucks for the cab ride to {item}.",
        "Grabbed a taxi over to {item}; it was ${amt}.",
    ],
    "grocery_q": [
        "Groceries: what's my spend in total?",
        "Put a number on my grocery bills, all told?",
        "All told, what did groceries cost me?",
        "What's the sum of my grocery spending?",
        "So far, how much money went on my grocery shopping?",
    ],
    "grocery_paid": [
        "Spent ${amt} at {item} stocking up on groceries.",
        "My grocery trip at {item} was ${amt}.",
        "Paid {amt} dollars for food at {item}.",
        "My grocery receipt from {item} said ${amt}.",
    ],
}
WIDE_DEV2: dict[str, list[str]] = _variant("dev2", _DEV2)
# a third development set, in its own module (scroll/tasks/grammar_dev3.py)
WIDE_DEV3: dict[str, list[str]] = _variant("dev3", DEV3)

_GROUP = re.compile(r"\[([^\[\]]*)\]")


def _tidy(text: str) -> str:
    text = re.sub(r" {2,}", " ", text)
    return re.sub(r" +([,.!?;:])", r"\1", text).strip()


def expand(frame: str, rng: random.Random) -> str:
    """Draw every `[a|b|...]` group of `frame`, left to right, with `rng` (slots stay unfilled)."""
    return _tidy(_GROUP.sub(lambda m: rng.choice(m.group(1).split("|")), frame))


def expansions(frame: str) -> list[str]:
    """Every sentence `frame` can expand to (slots unfilled), in a fixed order."""
    m = _GROUP.search(frame)
    if m is None:
        return [_tidy(frame)]
    out: list[str] = []
    for option in m.group(1).split("|"):
        out += expansions(frame[:m.start()] + option + frame[m.end():])
    return out
