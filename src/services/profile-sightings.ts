/** remembered-profiles.ts under its former names, for the profile cache until it imports that file itself (its owner's change). */
export { type RememberedProfilesOptions as ProfileSightingsOptions, createRememberedProfiles as createProfileSightings } from './remembered-profiles.js';
